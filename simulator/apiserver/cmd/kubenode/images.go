package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// importImages loads the node's images into containerd: the pause image (built here from bin/pause), each
// --image archive under its name, and the simulated driver image derived from --driver-base.
func importImages(o Options) error {
	pause, err := os.ReadFile(filepath.Join(o.Bin, "pause"))
	if err != nil {
		return fmt.Errorf("the pause binary: %v", err)
	}
	layer := tarOf(map[string]fileEntry{"pause": {mode: 0o755, data: pause}})
	cfg := imageConfig(map[string]any{"Entrypoint": []string{"/pause"}, "User": "65535:65535"}, [][]byte{layer})
	archive := filepath.Join(o.Work, "pause.oci.tar")
	if err := writeArchive(archive, PauseImage, nil, cfg, [][]byte{layer}); err != nil {
		return err
	}
	if err := ctr(o.Work, "images", "import", archive); err != nil {
		return err
	}
	for _, spec := range o.Images {
		file, name, ok := strings.Cut(spec, "=")
		if !ok || file == "" || name == "" {
			return fmt.Errorf("--image %q: expected FILE=NAME", spec)
		}
		start := time.Now()
		if err := ctr(o.Work, "images", "import", "--base-name", name, file); err != nil {
			return err
		}
		logf("imported %s as %s in %.1f s", file, name, time.Since(start).Seconds())
	}
	if o.DriverBase != "" {
		out := filepath.Join(o.Work, "simulated-driver.oci.tar")
		if err := deriveDriverImage(o.DriverBase, out); err != nil {
			return fmt.Errorf("the simulated driver image from %s: %v", o.DriverBase, err)
		}
		if err := ctr(o.Work, "images", "import", out); err != nil {
			return err
		}
		_ = os.Remove(out)
	}
	return nil
}

type fileEntry struct {
	mode int64
	data []byte
}

// tarOf makes a reproducible layer: files owned by root, time 0, in name order (folders implied by the paths are
// added first).
func tarOf(files map[string]fileEntry) []byte {
	var names []string
	dirs := map[string]bool{}
	for n := range files {
		names = append(names, n)
		for d := filepath.Dir(n); d != "." && d != "/"; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	var all []string
	for d := range dirs {
		all = append(all, d+"/")
	}
	all = append(all, names...)
	sort.Strings(all)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range all {
		if strings.HasSuffix(n, "/") {
			_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: n, Mode: 0o755, ModTime: time.Unix(0, 0)})
			continue
		}
		f := files[n]
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: f.mode, Size: int64(len(f.data)),
			ModTime: time.Unix(0, 0)})
		_, _ = tw.Write(f.data)
	}
	_ = tw.Close()
	return buf.Bytes()
}

func digestOf(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

func imageConfig(config map[string]any, layers [][]byte) []byte {
	var diffs []string
	for _, l := range layers {
		diffs = append(diffs, digestOf(l))
	}
	b, _ := json.Marshal(map[string]any{"architecture": runtime.GOARCH, "os": "linux", "config": config,
		"rootfs": map[string]any{"type": "layers", "diff_ids": diffs}})
	return b
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// writeArchive writes an OCI image layout tar holding one image named name: the blobs of base (already written
// by the caller's copy, see deriveDriverImage) are referenced, the new config and layers written.
func writeArchive(path, name string, copyBase func(*tar.Writer) ([]descriptor, error), config []byte, layers [][]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	blob := func(b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "blobs/sha256/" + strings.TrimPrefix(digestOf(b), "sha256:"),
			Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	var layerDescs []descriptor
	if copyBase != nil {
		if layerDescs, err = copyBase(tw); err != nil {
			return err
		}
	}
	for _, l := range layers {
		if err := blob(l); err != nil {
			return err
		}
		layerDescs = append(layerDescs, descriptor{MediaType: "application/vnd.oci.image.layer.v1.tar", Digest: digestOf(l), Size: int64(len(l))})
	}
	if err := blob(config); err != nil {
		return err
	}
	manifest, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: digestOf(config), Size: int64(len(config))},
		"layers": layerDescs})
	if err := blob(manifest); err != nil {
		return err
	}
	tag := name[strings.LastIndex(name, ":")+1:]
	index, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []descriptor{{
		MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: digestOf(manifest), Size: int64(len(manifest)),
		Annotations: map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": tag}}}})
	for n, b := range map[string][]byte{"index.json": index, "oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`)} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	return tw.Close()
}

// deriveDriverImage writes DriverImage: the image of base (an OCI archive of one platform, e.g. the node-agent
// image for this machine's architecture: Debian with a shell, as the chart's driver.command needs) plus a layer
// holding /driver, the "driver package" the driver container copies into the host's staging folder. The simulator's
// DriverLoader "loads" it; nothing in it is ever executed.
func deriveDriverImage(base, out string) error {
	small := map[string][]byte{} // index.json and the JSON blobs
	err := eachEntry(base, func(h *tar.Header, r io.Reader) error {
		if h.Typeflag == tar.TypeReg && (h.Name == "index.json" || h.Size < 1<<20) {
			b, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			small[strings.TrimPrefix(h.Name, "./")] = b
		}
		return nil
	})
	if err != nil {
		return err
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(small["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		return fmt.Errorf("index.json: expected one manifest (an archive of one platform), got %d (%v)", len(index.Manifests), err)
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(small[blobPath(index.Manifests[0].Digest)], &manifest); err != nil || manifest.Config.Digest == "" {
		return fmt.Errorf("manifest %s: %v", index.Manifests[0].Digest, err)
	}
	var config map[string]any
	if err := json.Unmarshal(small[blobPath(manifest.Config.Digest)], &config); err != nil {
		return fmt.Errorf("config %s: %v", manifest.Config.Digest, err)
	}
	layer := tarOf(map[string]fileEntry{
		"driver/README": {mode: 0o644, data: []byte("A simulated Ascend driver package (npu-lifecycle's real-node tests): the simulator's " +
			"DriverLoader loads it into the emulated host; nothing here runs.\n")},
		"driver/load": {mode: 0o755, data: []byte("#!/bin/sh\necho \"simulated driver $1: loaded by the simulator, not by this script\"\n")},
	})
	rootfs, _ := config["rootfs"].(map[string]any)
	diffs, _ := rootfs["diff_ids"].([]any)
	rootfs["diff_ids"] = append(diffs, digestOf(layer))
	history, _ := config["history"].([]any)
	config["history"] = append(history, map[string]any{"created": "1970-01-01T00:00:00Z", "created_by": "kubenode: the simulated driver package /driver"})
	cfg, _ := json.Marshal(config)
	copyBase := func(tw *tar.Writer) ([]descriptor, error) {
		keep := map[string]bool{}
		for _, l := range manifest.Layers {
			keep[blobPath(l.Digest)] = true
		}
		err := eachEntry(base, func(h *tar.Header, r io.Reader) error {
			name := strings.TrimPrefix(h.Name, "./")
			if !keep[name] {
				return nil
			}
			hdr := *h
			hdr.Name = name
			if err := tw.WriteHeader(&hdr); err != nil {
				return err
			}
			_, err := io.Copy(tw, r)
			return err
		})
		return manifest.Layers, err
	}
	return writeArchive(out, DriverImage, copyBase, cfg, [][]byte{layer})
}

func blobPath(digest string) string {
	return "blobs/sha256/" + strings.TrimPrefix(digest, "sha256:")
}

func eachEntry(path string, fn func(*tar.Header, io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}
