//===- DlcCanonicalize.td - one-line algebraic rewrites -----*- tablegen -*-===//
//
// The declarative canonicalisation patterns of the dlc ops: identities whose
// match is one op and one constant. Rewrites that need logic (composing
// permutations, checking which operand a broadcast is redundant for) are C++
// patterns in Canonicalize.cpp, which also registers these.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_IR_DLCCANONICALIZE_TD
#define DLC_IR_DLCCANONICALIZE_TD

include "mlir/IR/PatternBase.td"
include "ir/DlcOps.td"

// The constant is a splat (or a single element) of exactly `value`.
class SplatOf<string value>
    : Constraint<CPred<"::dlc::isSplatOf($0, " # value # ")">,
                 "a constant whose elements are all " # value>;

// The op's result has its operand's type: dropping the op neither
// broadcasts nor changes the element type.
def SameType
    : Constraint<CPred<"$0.getType() == $1.getType()">, "of the same type">;

//===----------------------------------------------------------------------===//
// x op identity = x
//===----------------------------------------------------------------------===//

def AddZeroRight : Pat<(Dlc_AddOp:$r $x, (Dlc_ConstantOp $c)),
    (replaceWithValue $x), [(SplatOf<"0.0"> $c), (SameType $r, $x)]>;
def AddZeroLeft : Pat<(Dlc_AddOp:$r (Dlc_ConstantOp $c), $x),
    (replaceWithValue $x), [(SplatOf<"0.0"> $c), (SameType $r, $x)]>;
def SubZero : Pat<(Dlc_SubOp:$r $x, (Dlc_ConstantOp $c)),
    (replaceWithValue $x), [(SplatOf<"0.0"> $c), (SameType $r, $x)]>;
def MulOneRight : Pat<(Dlc_MulOp:$r $x, (Dlc_ConstantOp $c)),
    (replaceWithValue $x), [(SplatOf<"1.0"> $c), (SameType $r, $x)]>;
def MulOneLeft : Pat<(Dlc_MulOp:$r (Dlc_ConstantOp $c), $x),
    (replaceWithValue $x), [(SplatOf<"1.0"> $c), (SameType $r, $x)]>;
def DivOne : Pat<(Dlc_DivOp:$r $x, (Dlc_ConstantOp $c)),
    (replaceWithValue $x), [(SplatOf<"1.0"> $c), (SameType $r, $x)]>;

#endif // DLC_IR_DLCCANONICALIZE_TD
