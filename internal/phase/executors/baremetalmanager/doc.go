// Package baremetalmanager is the BaremetalManager executor: power and
// boot operations on the bare-metal hosts of a site's inventory through
// their BMCs. This package validates; running comes with the Redfish client.
package baremetalmanager
