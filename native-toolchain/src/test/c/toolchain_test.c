/*
 * Checks of the C stand-ins against what the machine says (run by check.sh, built against the assembled home).
 * Each check prints its name; the first failure exits 1 with what was expected and what came.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "amd64cpufeatures.h"
#include "svm_locale.h"

char *SVM_FindJavaTZmd(const char *tzMappings, int length);
int cSunMiscSignal_open(void);
int cSunMiscSignal_close(void);
int cSunMiscSignal_awaitSemaphore(void);
int cSunMiscSignal_checkPendingSignal(void);
void *cSunMiscSignal_signalHandlerFunctionPointer(void);

static int failures;
#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                       \
      fputc('\n', stderr);                                \
      failures++;                                         \
    }                                                     \
  } while (0)

static int cpuinfoHas(const char *flag) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[8192];
  int found = 0;
  while (f && fgets(line, sizeof(line), f)) {
    if (strncmp(line, "flags", 5) != 0) continue;
    char pattern[64];
    snprintf(pattern, sizeof(pattern), " %s", flag);
    for (char *p = strstr(line, pattern); p; p = strstr(p + 1, pattern)) {
      char after = p[strlen(pattern)];
      if (after == ' ' || after == '\n' || after == 0) found = 1;
    }
    break;
  }
  if (f) fclose(f);
  return found;
}

static void cpuFeatures(void) {
  CPUFeatures f;
  determineCPUFeatures(&f);
  struct { const char *flag; char value; } pairs[] = {
    {"cx8", f.fCX8}, {"cmov", f.fCMOV}, {"mmx", f.fMMX}, {"sse", f.fSSE}, {"sse2", f.fSSE2}, {"pni", f.fSSE3},
    {"ssse3", f.fSSSE3}, {"sse4_1", f.fSSE4_1}, {"sse4_2", f.fSSE4_2}, {"popcnt", f.fPOPCNT}, {"abm", f.fLZCNT},
    {"avx", f.fAVX}, {"avx2", f.fAVX2}, {"bmi1", f.fBMI1}, {"bmi2", f.fBMI2}, {"fma", f.fFMA}, {"f16c", f.fF16C},
    {"aes", f.fAES}, {"pclmulqdq", f.fCLMUL}, {"adx", f.fADX}, {"sha_ni", f.fSHA}, {"erms", f.fERMS},
    {"avx512f", f.fAVX512F}, {"avx512bw", f.fAVX512BW}, {"avx512vl", f.fAVX512VL}, {"clwb", f.fCLWB},
    {"clflushopt", f.fFLUSHOPT}, {"rdtscp", f.fRDTSCP}, {"hypervisor", f.fHV},
  };
  /*
   * A flag the kernel lists must be found. The converse does not hold everywhere: a kernel or hypervisor may leave out
   * of /proc/cpuinfo a feature that CPUID reports and the CPU has (a Firecracker VM on AMD EPYC, kernel 6.18, lists no
   * abm while CPUID and HotSpot's -Xlog:os+cpu report lzcnt), so such a flag is printed, not failed.
   */
  for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
    int listed = cpuinfoHas(pairs[i].flag);
    CHECK(!listed || pairs[i].value, "cpu flag %s: /proc/cpuinfo lists it, cpuid %d", pairs[i].flag, pairs[i].value);
    if (!listed && pairs[i].value) {
      printf("cpu flag %s: reported by cpuid, not listed by /proc/cpuinfo (hidden by the kernel or hypervisor)\n",
             pairs[i].flag);
    }
  }
  /* The image passes the complement of what it requires: all ones requires nothing. */
  unsigned char mask[sizeof(CPUFeatures)];
  memset(mask, 0xFF, sizeof(mask));
  CHECK(checkCPUFeatures((const char *) mask) == 0, "nothing required must pass");
  mask[offsetof(CPUFeatures, fSSE2)] = 0xFE;
  CHECK(checkCPUFeatures((const char *) mask) == 0, "SSE2, present on every x86-64, required must pass");
  const char *host = (const char *) &f;
  size_t absent = 0;
  while (absent < sizeof(CPUFeatures) && host[absent]) absent++;
  if (absent < sizeof(CPUFeatures)) {
    mask[absent] = 0xFE;
    CHECK(checkCPUFeatures((const char *) mask) != 0, "an absent feature (byte %zu) required must fail", absent);
  }
  puts("cpu features: every flag /proc/cpuinfo lists is found; the required-features check passes and fails as it must");
}

static void timeZone(void) {
  const char *cases[][2] = {
    {"Europe/Paris", "Europe/Paris"},
    {":America/New_York", "America/New_York"},
    {"posix/Europe/Berlin", "Europe/Berlin"},
    {"/usr/share/zoneinfo/Asia/Tokyo", "Asia/Tokyo"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    setenv("TZ", cases[i][0], 1);
    char *zone = SVM_FindJavaTZmd(NULL, 0);
    CHECK(zone && !strcmp(zone, cases[i][1]), "TZ=%s gave %s, not %s", cases[i][0], zone ? zone : "NULL", cases[i][1]);
    free(zone);
  }
  unsetenv("TZ");
  free(SVM_FindJavaTZmd(NULL, 0)); /* from the /etc/localtime link or copy, or NULL: must not fail */
  puts("time zone: TZ in its forms (id, :id, posix/id, zoneinfo path)");
}

static void signals(void) {
  CHECK(cSunMiscSignal_open() == 0, "open");
  CHECK(cSunMiscSignal_open() == 1, "a second open answers 1 (open already)");
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = (void (*)(int)) cSunMiscSignal_signalHandlerFunctionPointer();
  sigaction(SIGUSR1, &action, NULL);
  sigaction(SIGUSR2, &action, NULL);
  raise(SIGUSR1);
  raise(SIGUSR2);
  raise(SIGUSR1);
  CHECK(cSunMiscSignal_awaitSemaphore() == 0, "await after a signal");
  int usr1 = 0, usr2 = 0, other = 0;
  for (int sig; (sig = cSunMiscSignal_checkPendingSignal()) != -1;) {
    if (sig == SIGUSR1) usr1++; else if (sig == SIGUSR2) usr2++; else other++;
  }
  CHECK(usr1 == 2 && usr2 == 1 && other == 0, "pending: USR1 %d (2), USR2 %d (1), other %d (0)", usr1, usr2, other);
  CHECK(cSunMiscSignal_close() == 0, "close");
  puts("signals: counted per signal, the waiting thread woken");
}

static void locale(void) {
  setenv("LC_ALL", "C", 1);
  CHECK(svm_initialize_locale() == SVM_LOCALE_INITIALIZATION_SUCCEEDED, "initialize");
  svm_locale_props_t *props = svm_get_locale();
  CHECK(!strcmp(props->display_language, "en") && !strcmp(props->display_country, "US"),
        "the C locale reads as en_US, got %s_%s", props->display_language, props->display_country);
  setenv("LC_ALL", "C.UTF-8", 1);
  CHECK(svm_initialize_locale() == SVM_LOCALE_INITIALIZATION_SUCCEEDED, "initialize again");
  props = svm_get_locale();
  CHECK(!strcmp(props->format_language, "en") && !strcmp(props->format_country, "US"),
        "C.UTF-8 reads as en_US, got %s_%s", props->format_language, props->format_country);
  puts("locale: C and C.UTF-8 read as en_US");
}

static void jvm(const char *home) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/lib/svm/native/libjvm.so", home);
  void *lib = dlopen(path, RTLD_NOW);
  CHECK(lib != NULL, "dlopen %s: %s", path, dlerror());
  if (!lib) return;
  int (*snprintf_)(char *, size_t, const char *, ...) = dlsym(lib, "jio_snprintf");
  char buf[4];
  CHECK(snprintf_(buf, sizeof(buf), "%s", "abcdef") == -1 && !strcmp(buf, "abc"), "jio_snprintf truncates to -1");
  int (*findSignal)(const char *) = dlsym(lib, "JVM_FindSignal");
  CHECK(findSignal("INT") == SIGINT && findSignal("TERM") == SIGTERM && findSignal("NOPE") == -1, "JVM_FindSignal");
  void *(*create)(void) = dlsym(lib, "JVM_RawMonitorCreate");
  int (*enter)(void *) = dlsym(lib, "JVM_RawMonitorEnter");
  void (*exit_)(void *) = dlsym(lib, "JVM_RawMonitorExit");
  void *monitor = create();
  CHECK(enter(monitor) == 0 && enter(monitor) == 0, "a raw monitor is re-entrant");
  exit_(monitor);
  exit_(monitor);
  CHECK(dlsym(lib, "JVM_GetStackTrace") != NULL, "every name the JDK's libraries import is defined (a stub)");
  void (*unsupported)(void) = dlsym(lib, "JVM_GetStackTrace");
  pid_t child = fork();
  if (child == 0) {
    freopen("/dev/null", "w", stderr);
    unsupported();
    _exit(0);
  }
  int status;
  waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "a stub stops the process (status %d)", status);
  puts("libjvm.so: jio_snprintf, signals by name, raw monitors; a stub stops the process");
}

int main(int argc, char **argv) {
  cpuFeatures();
  timeZone();
  signals();
  locale();
  jvm(argv[1]);
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  return 0;
}
