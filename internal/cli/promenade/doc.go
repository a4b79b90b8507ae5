// Package promenade holds the cobra commands of the promenade binary:
// generate-certs, build-all, validate and serve.
package promenade
