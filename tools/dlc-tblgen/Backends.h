//===- Backends.h - the backends of dlc-tblgen ------------------*- C++ -*-===//

#ifndef DLC_TOOLS_DLC_TBLGEN_BACKENDS_H
#define DLC_TOOLS_DLC_TBLGEN_BACKENDS_H

#include "llvm/ADT/StringRef.h"

namespace llvm {
class raw_ostream;
class RecordKeeper;
} // namespace llvm

namespace dlc::tblgen {

/// Emits the .dlg op vocabulary of `dialect` (frontend/text/OpVocabulary.h
/// states its shape). Returns true on error, as TableGen backends do.
bool emitDlgVocabulary(const llvm::RecordKeeper &records,
                       llvm::StringRef dialect, llvm::raw_ostream &os);

} // namespace dlc::tblgen

#endif // DLC_TOOLS_DLC_TBLGEN_BACKENDS_H
