# Writes OUTPUT: `const char kEmuHeader[] = R"...(<INPUT's text>)...";`
# (cmake -DINPUT=... -DOUTPUT=... -P EmbedHeader.cmake), so that EmuCompile
# carries dlc_cuda_emu.h without needing the source tree at run time.
file(READ "${INPUT}" text)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by codegen/cuda/EmbedHeader.cmake.\n"
  "static const char kEmuHeader[] = R\"dlc_emu_header(${text})dlc_emu_header\";\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
