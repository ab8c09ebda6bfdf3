#!/usr/bin/env bash
# Writes <arch>cpufeatures.h from the builder's Java-side contract (<Arch>LibCHelper.CPUFeatures in svm.jar):
# one char per flag, in the order the interface declares them, and the three functions the image calls.
set -euo pipefail
java_home=$1 svm_jar=$2 out_dir=$3
for pair in amd64:AMD64 aarch64:AArch64 riscv64:RISCV64; do
  arch=${pair%%:*} prefix=${pair##*:}
  guard=$(echo "QML_${arch}CPUFEATURES_H" | tr a-z A-Z)
  {
    echo "/* Generated from com.oracle.svm.core.${arch}.${prefix}LibCHelper.CPUFeatures by gen-cpufeatures.sh. */"
    echo "#ifndef ${guard}"
    echo "#define ${guard}"
    echo "typedef struct {"
    "$java_home/bin/javap" -p -cp "$svm_jar" "com.oracle.svm.core.${arch}.${prefix}LibCHelper\$CPUFeatures" \
      | grep -o ' f[A-Za-z0-9_]*()' | tr -d ' ()' | sed 's/^/  char /; s/$/;/'
    echo "} CPUFeatures;"
    echo "void determineCPUFeatures(CPUFeatures *features);"
    echo "int checkCPUFeatures(const char *buildtimeFeatures);"
    echo "int checkCPUFeaturesOrExit(const char *buildtimeFeatures, const char *errorMessage);"
    echo "#endif"
  } > "$out_dir/${arch}cpufeatures.h"
done
