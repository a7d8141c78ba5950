# What pip's wheel holds (install component kiln_python: kiln's own install
# rules, of what pip does not build, stay out): the package folder kiln/ (its Python files come
# from pyproject.toml's wheel.packages), the module and its stubs, and, when
# kiln was built here, libkiln under kiln/lib with its compiler module and
# compile worker in kiln/lib/kiln: libkiln looks for them beside itself
# (docs/manual/configuration.md, KILN_COMPILER_MODULE), the module finds libkiln by RPATH.
set_target_properties(kiln_python PROPERTIES INSTALL_RPATH "${kiln_python_rpath}")
install(TARGETS kiln_python LIBRARY DESTINATION kiln COMPONENT kiln_python)
install(FILES ${kiln_python_package}/_kiln.pyi DESTINATION kiln COMPONENT kiln_python)
if(TARGET kiln_python_mpi)
  set_target_properties(kiln_python_mpi PROPERTIES INSTALL_RPATH "${kiln_python_rpath}")
  install(TARGETS kiln_python_mpi LIBRARY DESTINATION kiln COMPONENT kiln_python)
endif()
if(kiln_python_bundle)
  add_dependencies(kiln_python kiln_clang kiln_compile_worker)
  get_target_property(kiln_soversion kiln SOVERSION)
  # The file under its soname (what the module's DT_NEEDED names): a wheel holds no symbolic links.
  install(FILES $<TARGET_FILE:kiln> DESTINATION kiln/lib RENAME libkiln.so.${kiln_soversion}
          COMPONENT kiln_python)
  install(FILES $<TARGET_FILE:kiln_clang> DESTINATION kiln/lib/kiln COMPONENT kiln_python)
  install(PROGRAMS $<TARGET_FILE:kiln_compile_worker> DESTINATION kiln/lib/kiln COMPONENT kiln_python)
endif()
