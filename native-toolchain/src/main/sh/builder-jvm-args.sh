#!/usr/bin/env bash
# Prints the builder JVM's options: what the real driver passes (JVMCI on, the system class loader, lambda and
# method-handle settings) and an --add-exports of every package of the JDK modules the builder reaches into, to
# the builder's modules (the real driver takes a narrower list from GraalVM's suite.py, not published).
set -euo pipefail
home=$1
targets=org.graalvm.nativeimage.builder,org.graalvm.nativeimage.base,org.graalvm.nativeimage.pointsto,org.graalvm.nativeimage.objectfile,org.graalvm.nativeimage.configure,jdk.graal.compiler,org.graalvm.truffle.compiler
compiler=$(ls "$home"/lib/svm/builder/compiler-*.jar)
cat <<ARGS
-XX:+UnlockExperimentalVMOptions
-XX:+EnableJVMCI
-XX:-UseJVMCICompiler
-XX:+UseParallelGC
-XX:GCTimeRatio=9
-XX:+ExitOnOutOfMemoryError
-Xss10m
-Xshare:off
-Djava.awt.headless=true
-Dsubstratevm.HostLibC=glibc
-Dcom.oracle.graalvm.isaot=true
-Dtruffle.TrustAllTruffleRuntimeProviders=true
-Dgraalvm.ForcePolyglotInvalid=true
-Dgraalvm.locatorDisabled=true
-Djava.system.class.loader=com.oracle.svm.hosted.NativeImageSystemClassLoader
-Dorg.graalvm.nativeimage.imagecode=buildtime
-Djdk.internal.lambda.disableEagerInitialization=true
-Djdk.internal.lambda.eagerlyInitialize=false
-Djava.lang.invoke.InnerClassLambdaMetafactory.initializeLambdas=false
-Djava.lang.invoke.MethodHandle.DONT_INLINE_THRESHOLD=-1
-Djava.lang.invoke.MethodHandle.PROFILE_GWT=false
--add-modules=ALL-DEFAULT
--enable-native-access=org.graalvm.nativeimage.builder,ALL-UNNAMED
--upgrade-module-path
"$compiler"
ARGS
"$home/bin/java" -XX:+UnlockExperimentalVMOptions -XX:+EnableJVMCI --add-modules ALL-SYSTEM \
  "$(dirname "$0")/../driver/ModulePackages.java" "$targets" java.base jdk.internal.vm.ci jdk.management java.management jdk.jfr \
  jdk.internal.jvmstat jdk.unsupported java.logging jdk.net jdk.zipfs java.xml java.naming java.rmi java.security.jgss \
  jdk.security.auth java.desktop jdk.crypto.cryptoki jdk.localedata java.scripting jdk.attach jdk.internal.md \
  jdk.management.jfr jdk.nio.mapmode java.net.http
