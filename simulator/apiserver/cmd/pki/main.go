// Command pki writes the certificates and keys of one throw-away API server (RealApiServer in simulator/cluster):
// a CA, the kube-apiserver serving certificate, the admin, kube-controller-manager, kube-scheduler and kube-proxy
// client certificates, the service-account signing keys and, given a node name, the kubelet's client certificate
// of that node, all PEM, into the folder given as the first argument. Standard library only (crypto/x509).
//
//	pki <folder> [<node name>]
//
// Files: ca.crt, ca.key, server.crt, server.key, admin.crt, admin.key (RSA, PKCS#1), controller-manager.crt,
// controller-manager.key, scheduler.crt, scheduler.key, proxy.crt, proxy.key (RSA, PKCS#1), sa.key (RSA, PKCS#1),
// sa.pub (PKIX); with a node name also kubelet.crt, kubelet.key (CN=system:node:<name>, O=system:nodes: the Node
// authorizer's and NodeRestriction's identity of that node). Keys are written with mode 0600. Certificates are valid from one hour ago for 30 days.
// Exit code 2 on a usage error, 1 when a file cannot be written.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

func main() {
	if len(os.Args) != 2 && len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: pki <folder> [<node name>]  (writes ca.crt ca.key server.crt server.key admin.crt admin.key controller-manager.crt controller-manager.key scheduler.crt scheduler.key proxy.crt proxy.key sa.key sa.pub, and kubelet.crt kubelet.key for the node)")
		os.Exit(2)
	}
	node := ""
	if len(os.Args) == 3 {
		node = os.Args[2]
	}
	if err := write(os.Args[1], node); err != nil {
		fmt.Fprintln(os.Stderr, "pki:", err)
		os.Exit(1)
	}
}

func write(dir, node string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	notBefore := time.Now().Add(-time.Hour)
	notAfter := notBefore.Add(30 * 24 * time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "npu-lifecycle-test-ca"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writeCert(dir, "ca.crt", caDER); err != nil {
		return err
	}
	if err := writeECKey(dir, "ca.key", caKey); err != nil {
		return err
	}

	// the serving certificate: the loopback address the tests use, the in-cluster names of the kubernetes Service
	// (first address of --service-cluster-ip-range 10.0.0.0/24) and the address of the real node's bridge
	// (kubenode: 10.244.0.1), to which kube-apiserver binds when a real node is attached
	serverKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	server := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1"), net.ParseIP("10.244.0.1")},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	}
	serverDER, err := x509.CreateCertificate(rand.Reader, server, ca, &serverKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writeCert(dir, "server.crt", serverDER); err != nil {
		return err
	}
	if err := writeECKey(dir, "server.key", serverKey); err != nil {
		return err
	}

	// the admin client: group system:masters is bound to cluster-admin by the bootstrap RBAC policy.
	// RSA because every client (kubectl, fabric8) reads an RSA PKCS#1 key.
	if err := writeClient(dir, "admin", pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		ca, caKey, notBefore, notAfter); err != nil {
		return err
	}
	// kube-controller-manager: the user system:kube-controller-manager is bound to its ClusterRole by the
	// bootstrap RBAC policy (it then runs each controller under that controller's own ServiceAccount)
	if err := writeClient(dir, "controller-manager", pkix.Name{CommonName: "system:kube-controller-manager"},
		ca, caKey, notBefore, notAfter); err != nil {
		return err
	}

	// kube-scheduler and kube-proxy: bound to their ClusterRoles (system:kube-scheduler, system:node-proxier) by the
	// bootstrap RBAC policy
	if err := writeClient(dir, "scheduler", pkix.Name{CommonName: "system:kube-scheduler"},
		ca, caKey, notBefore, notAfter); err != nil {
		return err
	}
	if err := writeClient(dir, "proxy", pkix.Name{CommonName: "system:kube-proxy"},
		ca, caKey, notBefore, notAfter); err != nil {
		return err
	}
	if node != "" {
		if err := writeClient(dir, "kubelet", pkix.Name{CommonName: "system:node:" + node,
			Organization: []string{"system:nodes"}}, ca, caKey, notBefore, notAfter); err != nil {
			return err
		}
	}

	// service-account tokens (RS256): the private key signs, the public key verifies
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := writeRSAKey(dir, "sa.key", saKey); err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	return writePEM(dir, "sa.pub", "PUBLIC KEY", saPub, 0o644)
}

// writeClient writes <name>.crt and <name>.key: an RSA 2048 client certificate for subject, signed by ca.
func writeClient(dir, name string, subject pkix.Name, ca *x509.Certificate, caKey *ecdsa.PrivateKey,
	notBefore, notAfter time.Time) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	cert := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      subject,
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, cert, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writeCert(dir, name+".crt", der); err != nil {
		return err
	}
	return writeRSAKey(dir, name+".key", key)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

func writeCert(dir, name string, der []byte) error {
	return writePEM(dir, name, "CERTIFICATE", der, 0o644)
}

func writeECKey(dir, name string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(dir, name, "EC PRIVATE KEY", der, 0o600)
}

func writeRSAKey(dir, name string, key *rsa.PrivateKey) error {
	return writePEM(dir, name, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key), 0o600)
}

func writePEM(dir, name, kind string, der []byte, mode os.FileMode) error {
	return os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)
}
