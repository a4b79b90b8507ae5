// Package ironiccmd implements `airshipctl ironic local up|down|status`,
// the commands that run a site's Ironic on this machine
// (internal/localironic), and the hidden `airshipctl ironic serve-http`,
// the background image server `up` starts.
package ironiccmd
