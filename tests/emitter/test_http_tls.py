"""HTTPS delivery: the CA that httpx's environment names (SSL_CERT_FILE) decides, and the verifying
SSL context is made once per process and CA environment, not once per delivery pass."""

from __future__ import annotations

import http.server
import ssl
import subprocess
import threading

import pytest

from planlineage.emitter.transports import Delivered, HttpTransport, RetryLater, create_transport
from planlineage.emitter.transports.http import ssl_context


class _Accept(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args) -> None:
        pass


@pytest.fixture
def https_server(tmp_path):
    """A loopback HTTPS server whose certificate (for 127.0.0.1) is signed by no known CA."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Accept)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_address[1]}", cert
    server.shutdown()
    server.server_close()


def _send(url: str):
    with create_transport("http", {"url": url, "timeout": 5}) as transport:
        return transport.send('{"eventType": "START"}')


def test_the_ca_named_by_ssl_cert_file_decides_even_after_a_context_was_made(https_server, monkeypatch):
    url, cert = https_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    refused = _send(url)  # the usual CAs: the self-signed server is not trusted
    assert isinstance(refused, RetryLater)
    assert "CERTIFICATE_VERIFY_FAILED" in refused.reason or "certificate" in refused.reason.lower()
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert isinstance(_send(url), Delivered)  # a context kept from before would still refuse it


def test_delivery_passes_share_one_ssl_context(monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    made = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self, *args, **kwargs):
        made.append(args or kwargs)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    ssl_context(True)  # this process's context, if no test made it before
    made.clear()
    for _ in range(5):  # five passes, each with its own transport and client
        with create_transport("http", {"url": "https://127.0.0.1:9"}) as transport:
            assert isinstance(transport, HttpTransport)
            transport.client  # noqa: B018 - building the client is what loaded the CA certificates
    assert made == []
