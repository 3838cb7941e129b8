#!/bin/sh
# layers.sh: fails when a source file includes a header from a layer above
# its own. The layers, bottom to top, are the folders of src/ in LAYERS
# (docs/architecture.md explains each); a file may include headers of its
# own layer and of the layers below it, never above. The one file directly
# in src/ is plansim.h, the library's public header (api/ implements it),
# which includes no layer's.
LAYERS="base spec layout cost core net engine strategy metrics output app api"

src="${top_srcdir:-.}/src"
[ -d "$src" ] || { echo "layers.sh: no folder $src" >&2; exit 99; }

rank() { # the position of layer $1 in LAYERS, or nothing
    i=0
    for l in $LAYERS; do
        i=$((i + 1))
        [ "$l" = "$1" ] && { echo $i; return; }
    done
}

status=0
files=0
for file in "$src"/*/*.c "$src"/*/*.h "$src"/*/*.def; do
    [ -f "$file" ] || continue
    files=$((files + 1))
    layer=$(basename "$(dirname "$file")")
    own=$(rank "$layer")
    if [ -z "$own" ]; then
        echo "not ok - ${file#$src/}: folder $layer is not a layer ($LAYERS)"
        status=1
        continue
    fi
    for used in $(sed -n 's/^#include "\([a-z_]*\)\/.*"/\1/p' "$file" | sort -u); do
        theirs=$(rank "$used")
        if [ -z "$theirs" ] || [ "$theirs" -gt "$own" ]; then
            echo "not ok - ${file#$src/} ($layer) includes from $used, a layer above it"
            status=1
        fi
    done
done
if [ -n "$(ls "$src"/*.c "$src"/*.h 2>/dev/null | grep -v '/plansim\.h$')" ]; then
    echo "not ok - sources directly in src/, outside every layer (but plansim.h)"
    status=1
fi
if grep -q '^#include "[a-z_]*/' "$src/plansim.h"; then
    echo "not ok - plansim.h, the public header, includes a layer's header"
    status=1
fi
[ "$files" -gt 0 ] || { echo "not ok - no sources found under $src"; status=1; }
[ $status -eq 0 ] && echo "ok - $files files include only from their own layer or below"
exit $status
