//===- Grouping.h - partition a graph's ops into kernels --------*- C++ -*-===//
//
// The decisions of dlc-fuse, without touching the IR: which ops share a
// kernel. Fuse.cpp then outlines each group into a dlc.fusion region.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_PASSES_FUSION_GROUPING_H
#define DLC_PASSES_FUSION_GROUPING_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace dlc::fusion {

/// Partitions the fusible ops of `body` (see isFusible) into groups, each a
/// legal kernel (see regionKind), such that the graph of groups is acyclic.
/// Each group lists its ops in program order; groups are ordered by their
/// first op. Deterministic: every choice follows program order.
std::vector<llvm::SmallVector<mlir::Operation *>> formGroups(mlir::Block &body);

} // namespace dlc::fusion

#endif // DLC_PASSES_FUSION_GROUPING_H
