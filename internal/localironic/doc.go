// Package localironic runs OpenStack Ironic, the provisioning engine behind
// metal3-operator, for one site on this machine: Debian's all-in-one
// `ironic` process (API and conductor, no message bus, sqlite) and a static
// HTTP server for boot and deploy images, both bound to 127.0.0.1 by
// default. `airshipctl ironic local up|down|status`, the test harness
// (testenv.Ironic), `make demo` and the benchmarks use it.
//
// Everything lives in one state directory:
//
//	ironic.conf        Ironic's configuration (0600), rewritten by every Up
//	ironic.sqlite      the database; a new directory gets a copy of the
//	                   pristine schema cached once per Ironic version under
//	                   os.UserCacheDir()/airship
//	logs/ironic.log    Ironic's log; logs/image-server.log the image server's
//	http/              [deploy] http_root, served at the image server's URL;
//	                   callers drop images here; http/deploy.iso is the deploy ISO
//	tmp/, cache/       Ironic's scratch files, locks and image caches
//	htpasswd, credentials.yaml   with http_basic auth only (0600)
//	state.json         ports, URLs and the started processes
//
// Up is idempotent: on a directory whose Ironic runs it returns that one.
// Down stops only the processes Up recorded (PID and kernel start time,
// internal/process) and keeps the database and logs, so a site's Ironic
// restarts with its nodes and on the same ports.
//
// The deploy ISO is a real ISO 9660 image whose /boot/grub/grub.cfg `linux`
// line carries the deploy agent's kernel parameters, ipa-api-url naming the
// API: the Redfish emulator reads it when the ISO is inserted as virtual
// media and plays the agent against that API. Nodes name it in driver_info
// deploy_iso (Instance.DeployISOURL); Ironic hands a prebuilt ISO over as it is.
//
// With ServeImagesInProcess the image server runs in the calling process
// (tests, the e2e harness, benchmarks) and stops with Instance.Stop;
// otherwise Up runs it in the background as `airshipctl ironic serve-http`.
// With StopWithCaller, Ironic does not outlive the process that started it.
package localironic
