//===- ArenaViews.h - which bytes of which memory a buffer is ---*- C++ -*-===//
//
// A step's buffers are views of a few memories: the byte arenas it takes as
// arguments (`state`, `batch`, `io`, `workspace`), allocations and globals.
// memref.view at a constant byte shift places a buffer in its arena;
// subviews, casts, reshapes, loops that carry a buffer unchanged and
// scf.if results stay within what they view. This analysis follows those
// steps back to the memory and the bytes of it a buffer may touch, so that
// transforms ask one question, "may these two buffers share a byte?", and
// one more, "are they the same bytes addressed alike?". Forward, it finds
// every use of the memory of a buffer, for liveness.
//
// It assumes what the step's contract gives: different arguments of a
// function are different memory, and a view-like op addresses only bytes
// of its source.
//
//===----------------------------------------------------------------------===//
#ifndef GACC_PASSES_ARENAVIEWS_H
#define GACC_PASSES_ARENAVIEWS_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include <limits>
#include <optional>

namespace mlir::gacc {

/// The memory a memref value addresses: its root and the bytes of the root
/// it may touch.
struct ArenaView {
  enum Kind {
    /// An argument of a function (an arena): each is its own memory.
    Argument,
    /// A memref.alloc or memref.alloca.
    Allocation,
    /// A memref.get_global: every get_global of one name is one memory.
    Global,
    /// A value the analysis cannot see through (an unknown op's result, a
    /// loop that yields another buffer): it may be any memory.
    Opaque,
  };
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

  Kind kind = Opaque;
  Value root;
  /// The bytes of the root the value may touch, [begin, end): all of it
  /// (0 to kUnbounded) when not known.
  int64_t begin = 0, end = kUnbounded;
  /// Where in the root the value's base address is, when known: the first
  /// byte of a memref with an identity layout.
  std::optional<int64_t> base = 0;

  bool hasKnownRange() const { return end != kUnbounded; }
  /// Whether both address the same memory.
  bool hasSameRoot(const ArenaView &other) const;
  /// Whether both have one known base address in the same memory.
  bool hasSameBase(const ArenaView &other) const {
    return base && base == other.base && hasSameRoot(other);
  }
  /// Whether they may touch a byte in common.
  bool mayOverlap(const ArenaView &other) const;
};

/// What `memref` views.
ArenaView getArenaView(Value memref);

/// The role of the entry point's arena (kArenaRoles: state, batch, io,
/// workspace) that `memref` views, or "" (another function's argument, an
/// allocation, a value the analysis cannot see through). The argument's
/// attribute says so until gacc-plan-buffers drops it; then the entry
/// points gacc_step and gacc_eval take the arenas in that order.
StringRef getArenaRole(Value memref);

/// Whether the buffers `a` and `b` may touch a byte in common.
bool mayOverlap(Value a, Value b);

/// Whether `a` and `b` are the same bytes addressed alike: one value, or
/// values of one type with a static layout at one base address of one
/// memory.
bool isSameBuffer(Value a, Value b);

/// Calls `visit` on each use of `memref` and of every value that may hold
/// its memory: the results of views of it, the region arguments and results
/// of loops it initializes or that yield it, the results of scf.if ops that
/// yield it, every memref result of another op that takes it. Fails when
/// `visit` fails, or when the memory leaves the analysis' sight (a return,
/// another terminator).
LogicalResult walkAliasUses(Value memref,
                            function_ref<LogicalResult(OpOperand &)> visit);

} // namespace mlir::gacc

#endif // GACC_PASSES_ARENAVIEWS_H
