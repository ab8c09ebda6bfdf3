#include <jni.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <unistd.h>
JNIEXPORT jlong JNICALL Java_com_oracle_svm_hosted_ProgressReporterCHelper_getPeakRSS0(JNIEnv *e, jclass c) {
  struct rusage u; if (getrusage(RUSAGE_SELF, &u) != 0) return -1; return (jlong) u.ru_maxrss * 1024;
}
JNIEXPORT jint JNICALL Java_com_oracle_svm_hosted_ProgressReporterCHelper_getTerminalWindowColumns0(JNIEnv *e, jclass c) {
  struct winsize w; if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) != 0 || w.ws_col == 0) return 80; return w.ws_col;
}
