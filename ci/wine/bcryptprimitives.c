/* A stand-in for Windows' bcryptprimitives.dll, which Wine 8.0 lacks.
 * Rust's std (1.78 and later) fills its random seeds through ProcessPrng
 * from that DLL; without it every Rust program fails to start under Wine.
 * ProcessPrng is forwarded to BCryptGenRandom with the system's preferred
 * generator, which Wine does implement. Built by ci/wine.sh with mingw. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
        if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
