/*
 * SubstrateVM calls JNI_OnLoad_<lib> for each JDK library it links statically. This stand-in links the JDK's
 * shared library instead, and forwards to its own JNI_OnLoad (which caches the field and method ids its natives use),
 * if it has one: dlsym also searches a library's dependencies, so the symbol found must be defined in the library.
 * When the image does not link the library (it uses none of its natives), there is nothing to initialise.
 * Compiled once per library with -DLIB_NAME=<lib> -DONLOAD=JNI_OnLoad_<lib>.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <jni.h>
#define STR2(x) #x
#define STR(x) STR2(x)

JNIEXPORT jint JNICALL ONLOAD(JavaVM *vm, void *reserved) {
  void *library = dlopen("lib" STR(LIB_NAME) ".so", RTLD_NOW | RTLD_NOLOAD);
  if (!library) {
    return JNI_VERSION_1_8;
  }
  void *onLoad = dlsym(library, "JNI_OnLoad");
  struct link_map *map = 0;
  Dl_info info;
  int own = onLoad && dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && dladdr(onLoad, &info) != 0 && map != 0
            && info.dli_fname != 0 && map->l_name != 0 && strcmp(info.dli_fname, map->l_name) == 0;
  dlclose(library); /* dropping the reference RTLD_NOLOAD added */
  if (own && ((jint(*)(JavaVM *, void *)) onLoad)(vm, reserved) < 0) {
    return JNI_ERR;
  }
  return JNI_VERSION_1_8;
}
