// Package convert turns Armada's own documents (armada/Chart/v1|v2,
// armada/ChartGroup/v1|v2, armada/Manifest/v1|v2, each in the
// schema/metadata/data form) into ArmadaChart, ArmadaChartGroup and
// ArmadaManifest objects, so an existing Armada site moves over unchanged.
//
// Charts listed by a group, and groups listed by a manifest, are given
// target_state uninitialized: the group (or manifest) enables them in order,
// which is how sequencing works with the operator. Other documents (for
// example deckhand or promenade ones in the same files) are skipped.
//
// Every armada/ document is decoded strictly and its references checked;
// all problems are returned at once as Problems, and then no objects.
package convert
