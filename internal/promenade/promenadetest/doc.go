// Package promenadetest holds what Promenade's tests share: the example
// site's configuration with a freshly generated PKI.
package promenadetest
