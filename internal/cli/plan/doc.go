// Package plan implements `airshipctl plan`: list and validate.
package plan
