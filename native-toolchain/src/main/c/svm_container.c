/*
 * Stand-in for SubstrateVM's libsvm_container (com.oracle.svm.core.container.ContainerLibrary): it reports the
 * process as not containerized, so the image sizes itself from the machine (cgroup limits are not read).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <unistd.h>
#define SUCCESS_IS_NOT_CONTAINERIZED 0
int svm_container_initialize(int version) { (void) version; return SUCCESS_IS_NOT_CONTAINERIZED; }
unsigned long svm_container_physical_memory(void) {
  return (unsigned long) sysconf(_SC_PHYS_PAGES) * (unsigned long) sysconf(_SC_PAGESIZE);
}
long svm_container_memory_limit_in_bytes(void) { return -1; }
long svm_container_memory_and_swap_limit_in_bytes(void) { return -1; }
long svm_container_memory_soft_limit_in_bytes(void) { return -1; }
long svm_container_memory_usage_in_bytes(void) { return -1; }
long svm_container_memory_max_usage_in_bytes(void) { return -1; }
long svm_container_rss_usage_in_bytes(void) { return -1; }
long svm_container_cache_usage_in_bytes(void) { return -1; }
int svm_container_active_processor_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return (int) sysconf(_SC_NPROCESSORS_ONLN);
}
