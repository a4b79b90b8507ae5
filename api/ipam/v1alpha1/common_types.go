/*
Copyright The Airship-Go Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

// Textual forms of addresses and subnets. The patterns accept what
// upstream's do: dotted-quad IPv4 and the RFC 4291 IPv6 forms without an
// embedded IPv4 part or a zone.

// IPAddressStr is an IPv4 or IPv6 address.
// +kubebuilder:validation:Pattern=`^((((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))|((([0-9a-fA-F]{1,4}):){7}([0-9a-fA-F]{1,4})|(([0-9a-fA-F]{1,4}):){1,7}:|(([0-9a-fA-F]{1,4}):){1,6}:([0-9a-fA-F]{1,4})|(([0-9a-fA-F]{1,4}):){1,5}(:([0-9a-fA-F]{1,4})){1,2}|(([0-9a-fA-F]{1,4}):){1,4}(:([0-9a-fA-F]{1,4})){1,3}|(([0-9a-fA-F]{1,4}):){1,3}(:([0-9a-fA-F]{1,4})){1,4}|(([0-9a-fA-F]{1,4}):){1,2}(:([0-9a-fA-F]{1,4})){1,5}|([0-9a-fA-F]{1,4}):(:([0-9a-fA-F]{1,4})){1,6}|:((:([0-9a-fA-F]{1,4})){1,7}|:)))$`
type IPAddressStr string

// IPAddressv4Str is an IPv4 address.
// +kubebuilder:validation:Pattern=`^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$`
type IPAddressv4Str string

// IPAddressv6Str is an IPv6 address.
// +kubebuilder:validation:Pattern=`^((([0-9a-fA-F]{1,4}):){7}([0-9a-fA-F]{1,4})|(([0-9a-fA-F]{1,4}):){1,7}:|(([0-9a-fA-F]{1,4}):){1,6}:([0-9a-fA-F]{1,4})|(([0-9a-fA-F]{1,4}):){1,5}(:([0-9a-fA-F]{1,4})){1,2}|(([0-9a-fA-F]{1,4}):){1,4}(:([0-9a-fA-F]{1,4})){1,3}|(([0-9a-fA-F]{1,4}):){1,3}(:([0-9a-fA-F]{1,4})){1,4}|(([0-9a-fA-F]{1,4}):){1,2}(:([0-9a-fA-F]{1,4})){1,5}|([0-9a-fA-F]{1,4}):(:([0-9a-fA-F]{1,4})){1,6}|:((:([0-9a-fA-F]{1,4})){1,7}|:))$`
type IPAddressv6Str string

// IPSubnetStr is an IPv4 or IPv6 subnet in CIDR notation.
// +kubebuilder:validation:Pattern=`^((((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9]))/([0-9]|[1-2][0-9]|3[0-2])|((([0-9a-fA-F]{1,4}):){7}([0-9a-fA-F]{1,4})|(([0-9a-fA-F]{1,4}):){1,7}:|(([0-9a-fA-F]{1,4}):){1,6}:([0-9a-fA-F]{1,4})|(([0-9a-fA-F]{1,4}):){1,5}(:([0-9a-fA-F]{1,4})){1,2}|(([0-9a-fA-F]{1,4}):){1,4}(:([0-9a-fA-F]{1,4})){1,3}|(([0-9a-fA-F]{1,4}):){1,3}(:([0-9a-fA-F]{1,4})){1,4}|(([0-9a-fA-F]{1,4}):){1,2}(:([0-9a-fA-F]{1,4})){1,5}|([0-9a-fA-F]{1,4}):(:([0-9a-fA-F]{1,4})){1,6}|:((:([0-9a-fA-F]{1,4})){1,7}|:))/([0-9]{1,2}|1[0-1][0-9]|12[0-8]))$`
type IPSubnetStr string

// IPSubnetv4Str is an IPv4 subnet in CIDR notation.
// +kubebuilder:validation:Pattern=`^((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])/([0-9]|[1-2][0-9]|3[0-2])$`
type IPSubnetv4Str string

// IPSubnetv6Str is an IPv6 subnet in CIDR notation.
// +kubebuilder:validation:Pattern=`^((([0-9a-fA-F]{1,4}):){7}([0-9a-fA-F]{1,4})|(([0-9a-fA-F]{1,4}):){1,7}:|(([0-9a-fA-F]{1,4}):){1,6}:([0-9a-fA-F]{1,4})|(([0-9a-fA-F]{1,4}):){1,5}(:([0-9a-fA-F]{1,4})){1,2}|(([0-9a-fA-F]{1,4}):){1,4}(:([0-9a-fA-F]{1,4})){1,3}|(([0-9a-fA-F]{1,4}):){1,3}(:([0-9a-fA-F]{1,4})){1,4}|(([0-9a-fA-F]{1,4}):){1,2}(:([0-9a-fA-F]{1,4})){1,5}|([0-9a-fA-F]{1,4}):(:([0-9a-fA-F]{1,4})){1,6}|:((:([0-9a-fA-F]{1,4})){1,7}|:))/([0-9]{1,2}|1[0-1][0-9]|12[0-8])$`
type IPSubnetv6Str string
