//===- TensorReport.h - printing and comparing output tensors ---*- C++ -*-===//

#ifndef DLC_DRIVER_TENSORREPORT_H
#define DLC_DRIVER_TENSORREPORT_H

#include "oracle/kernels/Tensor.h"

#include <string>

namespace llvm {
class raw_ostream;
}

namespace dlc {

/// `name: f32[4, 10]`, the first `count` values, then min, max, mean and
/// standard deviation over all elements.
void printTensorSummary(llvm::raw_ostream &os, const std::string &name,
                        const oracle::Tensor &tensor, unsigned count);

/// NumPy's allclose: |actual - expected| <= atol + rtol * |expected| for
/// every element (NaN equal to NaN). Fills `report` with the largest errors
/// and, on a mismatch, the first element that differs.
bool compareTensors(const oracle::Tensor &actual,
                    const oracle::Tensor &expected, double rtol, double atol,
                    std::string &report);

} // namespace dlc

#endif // DLC_DRIVER_TENSORREPORT_H
