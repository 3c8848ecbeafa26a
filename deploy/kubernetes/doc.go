// Package kubernetes holds the Kubernetes manifests for scaling simbench out
// (an Indexed Job of run shards, the merge Job, the shared volume) and the
// test that decodes them strictly into the Kubernetes API types, so a typo in
// a manifest fails `go test`; image_test.go checks that they run the image
// the Dockerfile builds (`make image`), as its user. See docs/scaling.md.
package kubernetes
