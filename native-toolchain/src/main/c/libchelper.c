/*
 * Stand-in for SubstrateVM's libchelper (liblibchelper.a), written from the Java side of the functions the image
 * calls (@CFunction in com.oracle.svm.core: AMD64LibCHelper, LibCHelper, CSunMiscSignal, LocaleCHelper,
 * PosixVMThreads, LinuxLibCHelper, Fcntl, JfrThreadRepository) and the JDK's documented behaviour. Not GraalVM's
 * code: see README.md.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "amd64cpufeatures.h"
#include "svm_locale.h"

/* ---- CPU features (cpuid, as the Intel SDM and AMD APM number the bits) ---- */
static unsigned long long xgetbv0(void) {
  unsigned int eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((unsigned long long) edx << 32) | eax;
}
#define BIT(r, n) (((r) >> (n)) & 1)

void determineCPUFeatures(CPUFeatures *f) {
  unsigned int a, b, c, d, max, maxExt;
  memset(f, 0, sizeof(*f));
  max = __get_cpuid_max(0, 0);
  maxExt = __get_cpuid_max(0x80000000, 0);
  if (max < 1) return;
  __cpuid(1, a, b, c, d);
  f->fTSC = BIT(d, 4); f->fCX8 = BIT(d, 8); f->fCMOV = BIT(d, 15); f->fFLUSH = BIT(d, 19); f->fMMX = BIT(d, 23);
  f->fFXSR = BIT(d, 24); f->fSSE = BIT(d, 25); f->fSSE2 = BIT(d, 26); f->fHT = BIT(d, 28);
  f->fSSE3 = BIT(c, 0); f->fCLMUL = BIT(c, 1); f->fSSSE3 = BIT(c, 9); f->fFMA = BIT(c, 12); f->fSSE4_1 = BIT(c, 19);
  f->fSSE4_2 = BIT(c, 20); f->fPOPCNT = BIT(c, 23); f->fAES = BIT(c, 25); f->fAVX = BIT(c, 28); f->fF16C = BIT(c, 29);
  f->fHV = BIT(c, 31);
  int osxsave = BIT(c, 27);
  unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
  int osAvx = osxsave && (xcr0 & 0x6) == 0x6;            /* XMM and YMM state */
  int osAvx512 = osAvx && (xcr0 & 0xE0) == 0xE0;         /* opmask, ZMM_Hi256, Hi16_ZMM state */
  int osApx = osxsave && BIT(xcr0, 19);
  if (max >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f->fBMI1 = BIT(b, 3); f->fAVX2 = BIT(b, 5); f->fBMI2 = BIT(b, 8); f->fERMS = BIT(b, 9); f->fRTM = BIT(b, 11);
    f->fAVX512F = BIT(b, 16); f->fAVX512DQ = BIT(b, 17); f->fADX = BIT(b, 19); f->fAVX512_IFMA = BIT(b, 21);
    f->fFLUSHOPT = BIT(b, 23); f->fCLWB = BIT(b, 24); f->fAVX512PF = BIT(b, 26); f->fAVX512ER = BIT(b, 27);
    f->fAVX512CD = BIT(b, 28); f->fSHA = BIT(b, 29); f->fAVX512BW = BIT(b, 30); f->fAVX512VL = BIT(b, 31);
    f->fAVX512_VBMI = BIT(c, 1); f->fPKU = BIT(c, 3); f->fOSPKE = BIT(c, 4); f->fAVX512_VBMI2 = BIT(c, 6);
    f->fCET_SS = BIT(c, 7); f->fGFNI = BIT(c, 8); f->fAVX512_VAES = BIT(c, 9); f->fAVX512_VPCLMULQDQ = BIT(c, 10);
    f->fAVX512_VNNI = BIT(c, 11); f->fAVX512_BITALG = BIT(c, 12); f->fAVX512_VPOPCNTDQ = BIT(c, 14);
    f->fRDPID = BIT(c, 22);
    f->fFSRM = BIT(d, 4); f->fSERIALIZE = BIT(d, 14); f->fCET_IBT = BIT(d, 20); f->fAVX512_FP16 = BIT(d, 23);
    if (a >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      f->fSHA512 = BIT(a, 0); f->fAVX_IFMA = BIT(a, 23); f->fAPX_F = BIT(d, 21) && osApx;
    }
  }
  if (maxExt >= 0x80000001) {
    __cpuid(0x80000001, a, b, c, d);
    f->fLZCNT = BIT(c, 5); f->fSSE4A = BIT(c, 6); f->fAMD_3DNOW_PREFETCH = BIT(c, 8); f->fRDTSCP = BIT(d, 27);
  }
  if (maxExt >= 0x80000007) {
    __cpuid(0x80000007, a, b, c, d);
    f->fTSCINV_BIT = BIT(d, 8); f->fTSCINV = BIT(d, 8);
  }
  /* Features whose registers the operating system does not save are not usable. AVX10 is never reported. */
  if (!osAvx) {
    f->fAVX = f->fAVX2 = f->fFMA = f->fF16C = f->fAVX_IFMA = f->fSHA512 = 0;
  }
  if (!osAvx512) {
    f->fAVX512F = f->fAVX512DQ = f->fAVX512PF = f->fAVX512ER = f->fAVX512CD = f->fAVX512BW = f->fAVX512VL = 0;
    f->fAVX512_VPOPCNTDQ = f->fAVX512_VPCLMULQDQ = f->fAVX512_VAES = f->fAVX512_VNNI = f->fAVX512_VBMI2 = 0;
    f->fAVX512_VBMI = f->fAVX512_BITALG = f->fAVX512_IFMA = f->fAVX512_FP16 = 0;
  }
  f->fVZEROUPPER = f->fAVX;
}

/*
 * 0 when every feature the image was built for is present here. The image passes the complement of its required
 * features in the CPUFeatures layout: a byte of it ORed with the host's byte (0 or 1) is all ones exactly when the
 * feature is not required or present.
 */
int checkCPUFeatures(const char *buildtimeMask) {
  CPUFeatures here;
  determineCPUFeatures(&here);
  const unsigned char *mask = (const unsigned char *) buildtimeMask;
  const unsigned char *host = (const unsigned char *) &here;
  for (size_t i = 0; i < sizeof(CPUFeatures); i++) {
    if ((unsigned char) (mask[i] | host[i]) != 0xFF) return 1;
  }
  return 0;
}

int checkCPUFeaturesOrExit(const char *buildtime, const char *errorMessage) {
  int result = checkCPUFeatures(buildtime);
  if (result != 0) {
    fputs(errorMessage, stderr);
    fputc('\n', stderr);
    exit(1);
  }
  return result;
}

/* ---- Process environment, thread id, and varargs wrappers the image cannot call directly ---- */
extern char **environ;
char **getEnviron(void) { return environ; }
int getThreadId(void) { return (int) syscall(SYS_gettid); }
int fprintfSD(FILE *stream, const char *format, const char *s, int d) { return fprintf(stream, format, s, d); }
void *mremapP(void *oldAddress, size_t oldSize, size_t newSize, int flags, void *newAddress) {
  return mremap(oldAddress, oldSize, newSize, flags, newAddress);
}
int openSII(const char *path, int flags, int mode) { return open(path, flags, mode); }
int openatISII(int dirfd, const char *path, int flags, int mode) { return openat(dirfd, path, flags, mode); }

/*
 * ---- The system time zone, as JDK 25's TimeZone_md.c finds it on Linux: TZ (a zone id, or a path under the zoneinfo
 * directory), else the zone /etc/localtime links to, else the zone file under /usr/share/zoneinfo whose bytes
 * /etc/localtime has (a copy, as in many container images). A "posix/" prefix is dropped. ----
 */
#define ZONEINFO "/usr/share/zoneinfo/"

static char *zoneId(const char *name) {
  if (strncmp(name, ZONEINFO, strlen(ZONEINFO)) == 0) name += strlen(ZONEINFO);
  else if (strstr(name, "zoneinfo/")) name = strstr(name, "zoneinfo/") + strlen("zoneinfo/");
  if (strncmp(name, "posix/", 6) == 0) name += 6;
  return *name ? strdup(name) : NULL;
}

static char *readWhole(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *data = NULL;
  size_t length = 0, capacity = 0;
  for (;;) {
    if (length == capacity) {
      capacity = capacity ? capacity * 2 : 4096;
      char *grown = realloc(data, capacity);
      if (!grown) { free(data); fclose(f); return NULL; }
      data = grown;
    }
    size_t n = fread(data + length, 1, capacity - length, f);
    length += n;
    if (n == 0) break;
  }
  fclose(f);
  *size = length;
  return data;
}

/* The path under dir of a regular file with these bytes, or NULL; "posix" and "right" trees are not searched. */
static char *findSameFile(const char *dir, const char *data, size_t size, int depth) {
  DIR *d = opendir(dir);
  if (!d || depth > 4) { if (d) closedir(d); return NULL; }
  char *found = NULL;
  struct dirent *e;
  while (!found && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "posix") || !strcmp(e->d_name, "right") ||
        !strcmp(e->d_name, "localtime") || !strcmp(e->d_name, "posixrules")) continue;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    struct stat st;
    if (lstat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      found = findSameFile(path, data, size, depth + 1);
    } else if (S_ISREG(st.st_mode) && (size_t) st.st_size == size) {
      size_t otherSize;
      char *other = readWhole(path, &otherSize);
      if (other && otherSize == size && memcmp(other, data, size) == 0) found = strdup(path);
      free(other);
    }
  }
  closedir(d);
  return found;
}

/* Returns a malloc'd zone id, which the caller frees, or NULL (the image then uses a GMT offset id). */
char *SVM_FindJavaTZmd(const char *tzMappings, int length) {
  (void) tzMappings; (void) length;
  const char *tz = getenv("TZ");
  if (tz && *tz == ':') tz++;
  if (tz && *tz) return zoneId(tz);
  char target[PATH_MAX];
  ssize_t n = readlink("/etc/localtime", target, sizeof(target) - 1);
  if (n > 0) {
    target[n] = 0;
    return zoneId(target);
  }
  size_t size;
  char *data = readWhole("/etc/localtime", &size);
  if (!data) return NULL;
  char *path = findSameFile(ZONEINFO, data, size, 0);
  free(data);
  if (!path) return NULL;
  char *zone = zoneId(path);
  free(path);
  return zone;
}

/* ---- sun.misc.Signal dispatch: a C handler counts signals and wakes the Java dispatch thread ---- */
static sem_t signalSemaphore;
static atomic_int pending[NSIG];
static atomic_int isOpen;

/* 0 when opened, 1 when it was open already (the image treats anything else as a failure). */
int cSunMiscSignal_open(void) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&isOpen, &expected, 1)) return 1;
  for (int i = 0; i < NSIG; i++) atomic_store(&pending[i], 0);
  return sem_init(&signalSemaphore, 0, 0);
}
int cSunMiscSignal_close(void) {
  int expected = 1;
  if (!atomic_compare_exchange_strong(&isOpen, &expected, 0)) return -1;
  return sem_destroy(&signalSemaphore);
}
int cSunMiscSignal_awaitSemaphore(void) {
  int r;
  while ((r = sem_wait(&signalSemaphore)) == -1 && errno == EINTR) {
  }
  return r;
}
int cSunMiscSignal_signalSemaphore(void) { return sem_post(&signalSemaphore); }
int cSunMiscSignal_signalRangeCheck(int sig) { return sig > 0 && sig < NSIG; }
/* The number of one pending signal, taken off the count, or -1 when none is pending. */
int cSunMiscSignal_checkPendingSignal(void) {
  for (int sig = 1; sig < NSIG; sig++) {
    int n = atomic_load(&pending[sig]);
    while (n > 0) {
      if (atomic_compare_exchange_weak(&pending[sig], &n, n - 1)) return sig;
    }
  }
  return -1;
}
static void countSignal(int sig) {
  int savedErrno = errno; /* the interrupted code's */
  if (sig > 0 && sig < NSIG) {
    atomic_fetch_add(&pending[sig], 1);
    sem_post(&signalSemaphore); /* async-signal-safe */
  }
  errno = savedErrno;
}
void *cSunMiscSignal_signalHandlerFunctionPointer(void) { return (void *) countSignal; }

/* ---- Locale: the POSIX locale of the process, split into language, script, country and variant ---- */
static svm_locale_props_t props;
/* language[_country][.encoding][@variant]; C and POSIX (with any encoding) read as en_US, as the JDK reads them. */
static void split(const char *name, char **language, char **script, char **country, char **variant) {
  char buf[256];
  *language = *script = *country = *variant = NULL;
  snprintf(buf, sizeof(buf), "%s", name ? name : "C");
  char *at = strchr(buf, '@');
  if (at) { *at = 0; if (strcmp(at + 1, "euro") != 0) *variant = strdup(at + 1); }
  char *dot = strchr(buf, '.');
  if (dot) *dot = 0;
  if (!buf[0] || !strcmp(buf, "C") || !strcmp(buf, "POSIX")) snprintf(buf, sizeof(buf), "en_US");
  char *us = strchr(buf, '_');
  if (us) { *us = 0; *country = strdup(us + 1); }
  *language = strdup(buf);
}
static void freeProps(void) {
  char **fields[] = {&props.display_language, &props.display_script, &props.display_country, &props.display_variant,
                     &props.format_language, &props.format_script, &props.format_country, &props.format_variant};
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) { free(*fields[i]); *fields[i] = NULL; }
}
int svm_initialize_locale(void) {
  freeProps();
  setlocale(LC_ALL, "");
  split(setlocale(LC_MESSAGES, NULL), &props.display_language, &props.display_script, &props.display_country,
        &props.display_variant);
  split(setlocale(LC_CTYPE, NULL), &props.format_language, &props.format_script, &props.format_country,
        &props.format_variant);
  return props.display_language && props.format_language ? SVM_LOCALE_INITIALIZATION_SUCCEEDED
                                                         : SVM_LOCALE_INITIALIZATION_OUT_OF_MEMORY;
}
svm_locale_props_t *svm_get_locale(void) { return &props; }
