/*
 * Stand-in libjvm.so: the JVM_* and jio_* functions that the image (com.oracle.svm.core.jdk.Jvm) and the JDK's own
 * shared libraries (libjava.so, libnio.so, libnet.so, libzip.so, ...) import. In a native image there is no HotSpot:
 * the functions below are what those libraries need of it there; every other imported name is generated into
 * jvm_unsupported.c and stops the process with a message naming it (see README.md).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jni.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT void initialize(void) {}

EXPORT jint JVM_ActiveProcessorCount(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return (jint) sysconf(_SC_NPROCESSORS_ONLN);
}

EXPORT jlong JVM_CurrentTimeMillis(JNIEnv *env, jclass ignored) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (jlong) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

EXPORT jlong JVM_NanoTime(JNIEnv *env, jclass ignored) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (jlong) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Nanoseconds from offsetSeconds to now, or -1 when that does not fit (the contract of VM.getNanoTimeAdjustment). */
EXPORT jlong JVM_GetNanoTimeAdjustment(JNIEnv *env, jclass ignored, jlong offsetSeconds) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  jlong diff = (jlong) ts.tv_sec - offsetSeconds;
  if (diff >= 0x100000000LL || diff <= -0x100000000LL) return -1;
  return diff * 1000000000 + ts.tv_nsec;
}

EXPORT char *JVM_NativePath(char *path) { return path; }

EXPORT void *JVM_RawMonitorCreate(void) {
  pthread_mutex_t *m = malloc(sizeof(pthread_mutex_t));
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  if (m && pthread_mutex_init(m, &attr) != 0) { free(m); m = NULL; }
  pthread_mutexattr_destroy(&attr);
  return m;
}
EXPORT void JVM_RawMonitorDestroy(void *m) { pthread_mutex_destroy(m); free(m); }
EXPORT jint JVM_RawMonitorEnter(void *m) { return pthread_mutex_lock(m) == 0 ? 0 : -1; }
EXPORT void JVM_RawMonitorExit(void *m) { pthread_mutex_unlock(m); }

EXPORT void *JVM_FindLibraryEntry(void *handle, const char *name) { return dlsym(handle, name); }

EXPORT jboolean JVM_IsSupportedJNIVersion(jint version) {
  return version == JNI_VERSION_1_1 || version == JNI_VERSION_1_2 || version == JNI_VERSION_1_4 ||
         version == JNI_VERSION_1_6 || version == JNI_VERSION_1_8 || version == JNI_VERSION_9 ||
         version == JNI_VERSION_10 || version == JNI_VERSION_19 || version == JNI_VERSION_20 ||
         version == JNI_VERSION_21 || version == JNI_VERSION_24;
}

/*
 * Installs handler for sig; returns the previous handler, or (void *) -1 when sig cannot be handled. HotSpot reads
 * handler 2 as "the VM's own dispatcher", which there is none of here: refused. (On Linux the image installs its
 * signal handlers itself, with sigaction; this serves the JDK's natives.)
 */
EXPORT void *JVM_RegisterSignal(jint sig, void *handler) {
  if (handler == (void *) 2) return (void *) -1;
  struct sigaction now, before;
  memset(&now, 0, sizeof(now));
  now.sa_handler = (void (*)(int)) handler;
  sigemptyset(&now.sa_mask);
  now.sa_flags = SA_RESTART;
  if (sigaction(sig, &now, &before) != 0) return (void *) -1;
  return (void *) before.sa_handler;
}
EXPORT jboolean JVM_RaiseSignal(jint sig) { return raise(sig) == 0; }
EXPORT jint JVM_FindSignal(const char *name) {
  for (int sig = 1; sig < NSIG; sig++) {
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev && strcmp(abbrev, name) == 0) return sig;
  }
  return -1;
}

/* There is no HotSpot management interface: libmanagement's JNI_OnLoad then fails, as it says it does without one. */
EXPORT void *JVM_GetManagement(jint version) { return NULL; }

EXPORT void JVM_BeforeHalt(void) {}
EXPORT void JVM_Halt(jint code) { exit(code); }
EXPORT jboolean JVM_IsUseContainerSupport(void) { return JNI_FALSE; }
EXPORT jboolean JVM_IsContainerized(void) { return JNI_FALSE; }

EXPORT int jio_vsnprintf(char *str, size_t count, const char *fmt, va_list args) {
  if ((intptr_t) count <= 0) return -1;
  int result = vsnprintf(str, count, fmt, args);
  if (result > 0 && (size_t) result >= count) result = -1;
  return result;
}
EXPORT int jio_snprintf(char *str, size_t count, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int result = jio_vsnprintf(str, count, fmt, args);
  va_end(args);
  return result;
}
EXPORT int jio_vfprintf(FILE *f, const char *fmt, va_list args) { return vfprintf(f, fmt, args); }
EXPORT int jio_fprintf(FILE *f, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  int result = vfprintf(f, fmt, args);
  va_end(args);
  return result;
}

/* Called by the generated stubs. */
EXPORT void qml_unsupported_jvm_function(const char *name) {
  fprintf(stderr, "quarkus-mysql-lock native toolchain: %s is not implemented by the stand-in libjvm.so "
                  "(native-toolchain/README.md)\n", name);
  abort();
}
