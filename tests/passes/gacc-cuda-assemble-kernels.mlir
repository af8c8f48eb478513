// REQUIRES: ptxas
// RUN: gacc-opt %s --split-input-file --verify-diagnostics --gacc-cuda-assemble-kernels | FileCheck %s
// RUN: gacc-opt %s --split-input-file --verify-diagnostics --gacc-cuda-assemble-kernels=chips=sm_90 | FileCheck %s

// A PTX object becomes a fatbin (the object's default format, printed
// without a keyword): it starts with fatbin's magic number, 0xBA55ED50.
// Objects in other formats are kept as they are.
// CHECK-LABEL: gpu.binary @kernels [
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_80">, "P\EDU\BA
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_80">, bin = "cubin">]
gpu.binary @kernels [
  #gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0\0A.target sm_80\0A.address_size 64\0A.visible .entry empty() { ret; }\0A">,
  #gpu.object<#nvvm.target<chip = "sm_80">, bin = "cubin">
]

// -----

// What ptxas says is the error.
// expected-error @below {{ptxas failed for sm_}}
gpu.binary @broken [
  #gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0 not ptx">
]
