#!/usr/bin/env bash
# Fails when a GitHub workflow uses an action that is not pinned by a full
# commit SHA with its version as a trailing comment, e.g.
#
#   uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262 # v4.4.0
#
# A tag or branch can be moved to other code after review; a commit cannot.
# Local actions (./path) are part of the repository and need no pin; a
# docker:// action must name its image by digest.
#
#   hack/verify-action-pins.sh                 check .github/workflows/*.yml
#   hack/verify-action-pins.sh FILE...         check these files
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ]; then
	set -- "$root"/.github/workflows/*.yml "$root"/.github/workflows/*.yaml
fi

status=0
for f in "$@"; do
	[ -e "$f" ] || continue
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		# `uses:` as a step key (`- uses:`) or a job key (reusable workflow).
		[[ $line =~ ^[[:space:]]*(-[[:space:]]+)?uses:[[:space:]]*(.*)$ ]] || continue
		rest=${BASH_REMATCH[2]}
		ref=${rest%%[[:space:]]#*}
		ref=${ref%"${ref##*[![:space:]]}"}
		ref=${ref//\"/}
		ref=${ref//\'/}
		comment=""
		[[ $rest =~ [[:space:]]#[[:space:]]*([^[:space:]].*)$ ]] && comment=${BASH_REMATCH[1]}
		where="${f#"$root"/}:$n"
		case $ref in
		./*) continue ;;
		docker://*@sha256:*)
			[[ ${ref##*@sha256:} =~ ^[0-9a-f]{64}$ ]] && continue
			echo "$where: $ref: the image digest is not a sha256 of 64 hex digits" >&2
			;;
		docker://*)
			echo "$where: $ref: name the image by digest (docker://image@sha256:...)" >&2
			;;
		*@*)
			if [[ ! ${ref##*@} =~ ^[0-9a-f]{40}$ ]]; then
				echo "$where: $ref: pin the action by its full commit SHA, with the version as a comment (uses: ${ref%@*}@<sha> # ${ref##*@})" >&2
			elif [ -z "$comment" ]; then
				echo "$where: $ref: add the version the SHA is as a trailing comment (# vX.Y.Z)" >&2
			else
				continue
			fi
			;;
		*)
			echo "$where: $ref: no version; pin the action by its full commit SHA" >&2
			;;
		esac
		status=1
	done <"$f"
done
exit $status
