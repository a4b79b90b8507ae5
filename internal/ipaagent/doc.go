// Package ipaagent is a deploy agent speaking the protocol of OpenStack's
// ironic-python-agent (IPA) to Ironic, run in process for an emulated host
// whose disks are files. It is written from the protocol; it runs no
// command and touches nothing but the host's disk files.
//
// # Ironic's API
//
// Start looks the node up (GET {APIURL}/v1/lookup?addresses=MAC,MAC,
// retried until Ironic knows the node in a state that allows it), keeps
// the agent_token and heartbeat_timeout of the answer's config, then
// heartbeats (POST {APIURL}/v1/heartbeat/{node uuid} with callback_url,
// agent_token and agent_version) at once and every third of
// heartbeat_timeout (Config.HeartbeatInterval overrides it), and at once
// when an asynchronous command ends, as IPA does, so that Ironic goes on
// at once; with the X-OpenStack-Ironic-API-Version header 1.68.
//
// Ironic hands a node's agent token out once, to the first lookup it
// answers; a later lookup gets it masked ("******") until the node leaves
// that wait state. So the default client (NewAPIClient) waits up to
// APITimeout (5 minutes) for an answer: an agent giving up on a slow
// lookup would retry, get the mask, and have every heartbeat refused
// until Ironic's callback timeout (30 minutes by default) fails the step.
// Nothing else gives the agent a fresh token: Ironic pregenerates one
// (kernel parameter ipa-agent-token, which this agent does not read) only
// for a deploy ISO it builds from a kernel and ramdisk or for a removable
// disk, not for a prebuilt deploy_iso such as localironic's. An agent
// that got the mask logs why and keeps it as its token, so its API still
// refuses commands without a real one.
// It stops heartbeating once a power-off or reboot command was run, or
// when stopped (Heartbeating tells). With Config.NoHeartbeat it looks up
// and never heartbeats (a fault, for the callers' timeouts).
//
// # The agent's API
//
// It serves IPA's API on Config.Listen (loopback by default; httplimit's
// server timeouts): GET /v1/commands/ lists the command results, GET
// /v1/commands/{id} one, POST /v1/commands/?wait=true|false runs
// {"name": "<extension>.<command>", "params": {...}}; a command needs the
// agent_token query parameter once the lookup gave one (else 401); the
// results are read without it, as Ironic's agent client does. A
// result is {id, command_name, command_status RUNNING|SUCCEEDED|FAILED,
// command_error {type, code, message, details}, command_result}; a
// command while another runs is refused with 409 (agent is busy), an
// unknown one with 400.
//
// Commands: deploy.get_deploy_steps, clean.get_clean_steps,
// deploy.execute_deploy_step and clean.execute_clean_step (steps
// write_image, erase_devices_metadata and erase_devices; results
// {deploy|clean}_result and {deploy|clean}_step),
// standby.get_partition_uuids, standby.sync, image.install_bootloader (a
// no-op: the emulated firmware boots any disk holding a config drive),
// standby.power_off and standby.run_image (Config.PowerOff, Config.Reboot).
//
// # Disks
//
// write_image downloads image_info.urls[0] (streamed, through
// Config.ImageClient), verifies os_hash_algo/os_hash_value (else the
// legacy md5 checksum; a checksum that is an http(s) URL is a checksum
// file, as IPA reads one: the checksum alone, or "<checksum> <name>"
// lines of which the image file's is taken), and writes it from the
// start of the root disk:
// the disk of properties.root_device's name, serial and size hints (size
// in GiB, optionally with an operator: ==, >=, <=, >, <, !=), else, as
// IPA, the smallest disk of at least 4 GiB. Only raw images are written:
// anything else is refused, naming Ironic's force_raw_images and
// image_download_source=local that convert it. Zero blocks are punched,
// not written, so a disk file stays sparse. Then the config drive
// (base64 of a gzipped ISO 9660, or a URL to one, at most 64 MiB) goes
// into the disk's config-2 partition, made at the disk's end as IPA does
// (package configdrive) when the image has none. A checksum mismatch fails
// the command with an error naming the image URL without its query.
//
// erase_devices_metadata zeroes the first and last MiB of each disk and
// the first MiB of each partition; erase_devices empties each disk
// (truncated to zero and back: sparse again). Config.DiskChanged is
// called for each disk written or erased.
//
// Nothing secret is logged: not the token, the config drive, nor an
// image URL's query or user information.
package ipaagent
