# -*- Python -*-
# The GoogleTest binaries (every executable named *Tests under the unit
# build folder), run one test at a time by lit.

import os
import lit.formats

config.name = "dlc-unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = config.dlc_unit_obj_root
config.test_exec_root = config.dlc_unit_obj_root
config.environment["DLC_SOURCE_DIR"] = config.dlc_src_root
