// Package chartsource loads the chart an ArmadaChart's source points at: a
// chart directory on the operator's filesystem (types local and dir) or a
// gzipped archive on disk or served over HTTP(S) by an in-site chart server
// (type tar). It also computes the digest that tells the controller whether a
// release must be upgraded.
package chartsource
