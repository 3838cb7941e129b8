#!/bin/sh
# python.sh: the Python module's tests (python/tests, pytest), the module
# of the source tree over the library of this build ($PLANSIM_LIBRARY),
# compared with this build's program. Skipped (77) when neither $PYTHON
# nor Debian's python3 has pytest, unless $PLANSIM_REQUIRE_PYTEST is set
# (CI: ./bootstrap installs python3-pytest). In a sanitizer build the library needs the sanitizers'
# runtime loaded before Python starts: it is preloaded, with the leak
# checker off (Python's own allocations, kept until exit, would be its
# findings).
#
# Run by the test harness with $top_srcdir, $top_builddir, $PYTHON, $CC
# and $PLANSIM set.

# shellcheck source=tests/cli_lib.sh
. "${top_srcdir:?top_srcdir is not set}/tests/cli_lib.sh"

# the module is ctypes over the library: any Python 3 runs it. pytest runs
# under the build's Python when that has pytest, else under Debian's
# (where ./bootstrap installs python3-pytest: a pyenv or venv python3
# found first on PATH may lack it)
python=${PYTHON:-python3}
pytest_python=
for p in "$python" /usr/bin/python3; do
    if "$p" -c 'import pytest' 2>/dev/null; then
        pytest_python=$p
        break
    fi
done
if [ -z "$pytest_python" ]; then
    if [ -n "${PLANSIM_REQUIRE_PYTEST:-}" ]; then
        not_ok "pytest" "neither $python nor /usr/bin/python3 can import pytest (apt-get install python3-pytest)"
        finish
    fi
    echo "python.sh: skipped: neither $python nor /usr/bin/python3 has pytest (apt-get install python3-pytest)"
    exit 77
fi

PLANSIM_LIBRARY="${top_builddir:?top_builddir is not set}/src/.libs/libplansim.so"
PYTHONPATH="$top_srcdir/python"
export PLANSIM_LIBRARY PYTHONPATH
if ldd "$PLANSIM_LIBRARY" | grep -q libasan; then
    LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export LD_PRELOAD ASAN_OPTIONS
fi
# no bytecode written into the source tree (read-only in make distcheck)
if PYTHONDONTWRITEBYTECODE=1 "$pytest_python" -m pytest -q -p no:cacheprovider \
    "$top_srcdir/python/tests" >"$tmp/pytest.out" 2>&1; then
    ok "pytest python/tests: $(tail -n 1 "$tmp/pytest.out")"
else
    cat "$tmp/pytest.out"
    not_ok "pytest python/tests" "$(tail -n 1 "$tmp/pytest.out")"
fi

# the issue's one-liner at the top of the build tree, with no PYTHONPATH
# nor PLANSIM_LIBRARY: the module through the build's link (Makefile.am's
# all-local), the library beside it; it prints the program's step time
problem=
step=$("$PLANSIM" simulate --format json | sed -n 's/^  "step_time_s": \(.*\),$/\1/p')
shown=$(cd "$top_builddir" && env -u PYTHONPATH -u PLANSIM_LIBRARY PYTHONDONTWRITEBYTECODE=1 \
    "$python" -c 'import plansim; print(plansim.simulate()["step_time_s"])' 2>&1)
[ -n "$step" ] && [ "$shown" = "$step" ] || problem="printed $shown, the program's $step"
check "python3 -c 'import plansim; ...' at the top of the build tree prints the program's step time" "$problem"
finish
