// Package strictyaml decodes YAML or JSON into Go types with JSON tags,
// refusing unknown fields and repeated keys, naming each unknown field by
// its full path (unknown field "phase.pth"), so a typo or a pasted-twice
// key in a hand-written file is an error instead of a setting silently
// ignored or overridden. Airship's own files (the airship config,
// metadata.yaml) and airshipit.org documents are read with it.
//
// It imports nothing of this project, so that the packages that read
// those files (internal/config, internal/document and the commands) can
// all use it without importing each other.
package strictyaml
