// Package strictyaml decodes YAML or JSON into Go types with JSON tags,
// refusing unknown fields (and, in JSON, duplicate ones) and naming each
// by its full path (unknown field "phase.pth"), so a typo in a
// hand-written file is an error instead of a setting silently ignored.
// Airship's own files (the airship config, metadata.yaml) and
// airshipit.org documents are read with it. A key repeated in YAML is
// not refused: the YAML to JSON conversion keeps its last value.
//
// It imports nothing of this project, so that the packages that read
// those files (internal/config, internal/document and the commands) can
// all use it without importing each other.
package strictyaml
