// Package nodelabels updates a Node's labels to a desired set, as
// Promenade's PUT /api/v1.0/node-labels/{node} does: it computes the
// difference from the labels the Node has, refuses changes that move the
// node in or out of the control plane or etcd unless forced, and patches
// only that difference, guarded by the Node's resourceVersion so that
// concurrent updates are never lost.
package nodelabels
