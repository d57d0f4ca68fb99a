#!/usr/bin/env bash
# Lists every place where an 8-byte field of a packed record (#pragma pack) is bound to a
# reference or has its address taken: std::min/std::max, std::pair, push_back, RecordWriter::put
# and `const auto&` all take references, and UBSan's alignment check stops at such a reference
# to a field at a 4-byte boundary. Copy the field into a local first. Exit status 1 if any.
# usage: check-packed-fields.sh [BUILD_DIR]   (a configured build: its compile_commands.json)
# Needs clang-query (Debian: clang-tools). It parses every translation unit: minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -f "$build/compile_commands.json" ] ||
  { echo "check-packed-fields.sh: no $build/compile_commands.json (configure first)" >&2; exit 2; }
command -v clang-query > /dev/null ||
  { echo "check-packed-fields.sh: clang-query not found (Debian: clang-tools)" >&2; exit 2; }
# A member expression naming a non-bit-field 8-byte scalar of a record with #pragma pack, that
# is neither read (lvalue-to-rvalue), nor assigned, nor the base of a further member access.
query=$(mktemp)
trap 'rm -f "$query"' EXIT
cat > "$query" <<'QUERY'
set output diag
match memberExpr(member(fieldDecl(hasParent(recordDecl(hasAttr("attr::MaxFieldAlignment"))), unless(isBitField()), hasType(hasCanonicalType(anyOf(asString("unsigned long"), asString("long"), asString("double"), asString("unsigned long long"), asString("long long")))))), unless(hasParent(implicitCastExpr(hasCastKind("CK_LValueToRValue")))), unless(hasParent(memberExpr())), unless(hasParent(binaryOperator(isAssignmentOperator()))))
QUERY
mapfile -t files < <(python3 -c "import json, sys
print('\n'.join(sorted({e['file'] for e in json.load(open(sys.argv[1]))})))" \
  "$build/compile_commands.json")
hits=$(clang-query -p "$build" -f "$query" "${files[@]}" 2>/dev/null | grep -A1 'binds here' |
       sed 's/: note: "root" binds here//' || true)
if [ -n "$hits" ]; then
  echo "$hits"
  echo "check-packed-fields.sh: packed fields bound to references (copy them first)" >&2
  exit 1
fi
echo "check-packed-fields.sh: no packed 8-byte field bound to a reference in ${#files[@]} files"
