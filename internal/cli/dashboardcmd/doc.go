// Package dashboardcmd is `airshipctl dashboard`: it serves the site's
// dashboard (internal/dashboard) on loopback by default, and beyond it only
// with a token and TLS.
package dashboardcmd
