// Package data renders Metal3DataTemplates (infrastructure.cluster.x-k8s.io
// /v1beta1) into the meta-data and network-data Secrets of bare-metal
// hosts, as cluster-api-provider-metal3 does.
//
// The renderer (RenderMetaData, RenderNetworkData, Pools) is pure: given
// a template, the Metal3Machine, its BareMetalHost and Machine, the index
// and the addresses allocated from the pools the template names, it writes
// the YAML upstream writes, byte for byte.
//
// Two reconcilers sit on top. The Metal3DataTemplate reconciler gives each
// Metal3DataClaim naming a template the lowest free index and a Metal3Data
// <template>-<index>; the Metal3Data objects are the record of indexes
// (a name taken is an index taken), and status.indexes their summary. The
// Metal3Data reconciler claims an address from each pool (an IPClaim
// <data>-<pool>, served by package ipam), then renders the Secrets
// <Metal3Machine>-metadata and <Metal3Machine>-networkdata (keys metaData
// and networkData), and reports what blocks it in status.errorMessage,
// naming the template field: a wait (another object not there or not
// ready) is looked at again after 10 s, a template that cannot be rendered
// for the objects as they are after a minute. Deleting a claim deletes its
// Metal3Data, whose deletion releases the IPClaims and the Secrets.
// Statuses are written once per pass, with the optimistic lock, when they
// changed; the objects of a paused Cluster (package capi's Paused) are
// left alone.
//
// Every reference resolves in the object's own namespace (package refs): a
// Metal3Data whose template, claim, metaData or networkData names another
// is refused before its finalizer and before anything is read, and a
// Metal3DataClaim naming another namespace's template is never served (the
// same-named template of its own namespace says why in its status).
package data
