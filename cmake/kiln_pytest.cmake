# kiln_add_pytest(NAME FILE [ENVIRONMENT VAR=VALUE...]): a ctest test that runs
# the pytest file FILE with the project's .venv (scripts/setup.sh always makes
# it, with pytest, matplotlib and jsonschema pinned). Without it the test
# fails, saying so: a missing .venv is a broken setup, not a reason to skip.
# Looked for when the test runs, so a .venv made after configuring counts.
set(KILN_TEST_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH
    "The Python the pytest tests run with (scripts/setup.sh makes .venv)")

function(kiln_add_pytest name file)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "ENVIRONMENT")
  set(run [=[
if [ ! -x "$0" ]; then echo "$2: no Python at $0 (KILN_TEST_PYTHON): run scripts/setup.sh, which makes .venv" >&2; exit 1; fi
exec "$0" -m pytest -q -p no:cacheprovider "$1"]=])
  add_test(NAME ${name} COMMAND sh -c "${run}" "${KILN_TEST_PYTHON}" "${file}" "${name}")
  if(arg_ENVIRONMENT)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${arg_ENVIRONMENT}")
  endif()
endfunction()
