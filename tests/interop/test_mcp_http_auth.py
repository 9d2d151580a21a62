"""Interop: the official MCP Python SDK (`mcp` 2.3.0) against `xcsh serve --http` exposed the
way docs/HTTP.md says: a bearer token (`--auth-token-file`), and HTTPS (`--tls-cert`,
`--tls-key`) with a certificate this script makes (a CA and a server certificate, with the
`cryptography` package).

The client is the SDK's high-level `mcp.Client` used as its docs show, in its default mode
(which speaks protocol 2026-07-28 with xcsh), over `streamable_http_client` with an
`httpx2.AsyncClient` that carries the token:

* without the token, or with a wrong one, the SDK cannot connect (the server answers 401),
  and its error carries the server's sentence saying what to send;
* with it, over HTTP and over HTTPS: `tools/list`, an `ast_grep` search, an `ast_edit`
  preview, and its `resolve` apply in a later call, passing the `handle` the preview named
  (2026-07-28 has no protocol session: the handle names the pending stack), which changes
  the file;
* an HTTPS client that does not trust the CA cannot connect.

Plain Python and asyncio, no test runner needed:

    .venv/bin/python tests/interop/test_mcp_http_auth.py [path/to/xcsh]

The binary defaults to $XCSH_BIN, then target/debug/xcsh. Exit status 0 when every check
passed; the last line is `N passed, M failed`.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import checks
from checks import check, text_of

TOKEN = "aW50ZXJvcC10b2tlbi1mb3ItdGhlLXB5dGhvbi1zZGs="
OLD = "fn load() -> R {\n    let v = read().unwrap();\n    Ok(v)\n}\n"
NEW = "fn load() -> R {\n    let v = read()?;\n    Ok(v)\n}\n"
EDIT = {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}


def causes(error: BaseException) -> str:
    """The error and everything it was raised from or grouped with, as one text."""
    seen: list[str] = []
    stack: list[BaseException] = [error]
    while stack:
        current = stack.pop()
        seen.append(f"{type(current).__name__}: {current}")
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                stack.append(linked)
    return "\n".join(seen)


class Certificates:
    """A CA and a server certificate it signed, for `localhost` and 127.0.0.1, as PEM files."""

    def __init__(self, directory: Path) -> None:
        now = datetime.datetime.now(datetime.timezone.utc)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "xcsh interop CA")])
        ca = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
            )
            .sign(ca_key, hashes.SHA256())
        )
        self.ca = directory / "ca.pem"
        self.cert = directory / "cert.pem"
        self.key = directory / "key.pem"
        self.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        self.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        self.key.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )


class Server:
    """`xcsh serve --http 127.0.0.1:0 --auth-token-file TOKEN [--tls-cert C --tls-key K]`."""

    def __init__(self, binary: Path, root: Path, token_file: Path, tls: Certificates | None = None) -> None:
        args = [str(binary), "serve", "--http", "127.0.0.1:0", "--root", str(root)]
        args += ["--auth-token-file", str(token_file)]
        if tls is not None:
            args += ["--tls-cert", str(tls.cert), "--tls-key", str(tls.key)]
        env = dict(os.environ)
        env.setdefault("RUST_LOG", "warn")
        self.process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        scheme = "https" if tls is not None else "http"
        assert f"{scheme}://" in line, line
        assert TOKEN not in line, "the token was printed"
        port = line.split(f"{scheme}://")[1].split("/")[0].rsplit(":", 1)[1]
        # `localhost`, the name the certificate is for; it resolves to loopback only.
        self.url = f"{scheme}://localhost:{port}/mcp"

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="xcsh-interop-auth-"))
    (root / "src").mkdir()
    (root / "src" / "load.rs").write_text(OLD)
    return root


def http_client(token: str | None, verify: ssl.SSLContext | bool = True) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx2.AsyncClient(headers=headers, verify=verify, timeout=30)


async def refused(url: str, token: str | None, verify: ssl.SSLContext | bool = True) -> str:
    """Connects and lists tools, which must fail; returns what the failure said."""
    try:
        async with http_client(token, verify) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                await client.list_tools()
    except BaseException as error:  # noqa: BLE001 - the SDK wraps transport errors in groups
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return causes(error)
    raise AssertionError(f"{url} was served with token {token!r}")


async def preview_and_apply(url: str, root: Path, verify: ssl.SSLContext | bool = True) -> None:
    """The core flow through the SDK with the token: list, search, preview, apply."""
    target = root / "src" / "load.rs"
    target.write_text(OLD)
    async with http_client(TOKEN, verify) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            assert client.protocol_version == "2026-07-28", client.protocol_version
            tools = [tool.name for tool in (await client.list_tools()).tools]
            assert tools[:2] == ["ast_grep", "ast_edit"], tools

            found = await client.call_tool("ast_grep", {"pat": "$X.unwrap()", "lang": "rust"})
            assert found.is_error is not True, text_of(found)
            assert "load.rs" in text_of(found) and "read().unwrap()" in text_of(found), text_of(found)

            preview = await client.call_tool("ast_edit", EDIT)
            assert preview.is_error is not True, text_of(preview)
            assert "+    let v = read()?;" in text_of(preview), text_of(preview)
            assert target.read_text() == OLD, "a preview wrote the file"
            structured = preview.structured_content or {}
            handle = structured.get("handle")
            assert isinstance(handle, str) and handle, (
                "the preview named no `handle` in structuredContent: on 2026-07-28 over HTTP there is "
                f"no protocol session to keep the pending action in; keys: {sorted(structured)}"
            )

            applied = await client.call_tool("resolve", {"action": "apply", "reason": "interop", "handle": handle})
            assert applied.is_error is not True, text_of(applied)
            assert text_of(applied) == "Applied 1 replacement in 1 file.", text_of(applied)
            assert target.read_text() == NEW, target.read_text()


async def run(binary: Path) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="xcsh-interop-auth-files-"))
    root = workspace()
    token_file = scratch / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    certificates = Certificates(scratch)
    trusting = ssl.create_default_context(cafile=str(certificates.ca))
    plain = Server(binary, root, token_file)
    tls = Server(binary, root, token_file, certificates)
    try:

        async def no_token() -> None:
            said = await refused(plain.url, None)
            # The server's own sentence reaches the SDK's error (a JSON-RPC error at 401).
            assert "needs `Authorization: Bearer <token>`" in said, said

        await check("serve --http --auth-token-file: the SDK without the token is refused (401)", no_token)

        async def wrong_token() -> None:
            said = await refused(plain.url, "d3JvbmctdG9rZW4tZm9yLXRoZS1weXRob24tc2Rr")
            assert "the bearer token is not this server's" in said, said

        await check("serve --http --auth-token-file: a wrong token is refused (401)", wrong_token)

        async def list_and_search(url: str, verify: ssl.SSLContext | bool) -> None:
            (root / "src" / "load.rs").write_text(OLD)  # an earlier check applied its edit
            async with http_client(TOKEN, verify) as http:
                async with Client(streamable_http_client(url, http_client=http)) as client:
                    tools = [tool.name for tool in (await client.list_tools()).tools]
                    assert tools[:2] == ["ast_grep", "ast_edit"], tools
                    found = await client.call_tool("ast_grep", {"pat": "$X.unwrap()", "lang": "rust"})
                    assert found.is_error is not True, text_of(found)
                    assert "read().unwrap()" in text_of(found), text_of(found)

        await check(
            "serve --http: the SDK with the token lists tools and searches",
            lambda: list_and_search(plain.url, True),
        )
        await check(
            "serve --http: the SDK with the token previews, then applies with the preview's handle",
            lambda: preview_and_apply(plain.url, root),
        )
        await check(
            "serve --http --tls-cert: the SDK trusting the CA lists tools and searches over HTTPS",
            lambda: list_and_search(tls.url, trusting),
        )
        await check(
            "serve --http --tls-cert: over HTTPS the SDK previews, then applies with the handle",
            lambda: preview_and_apply(tls.url, root, trusting),
        )

        async def untrusted() -> None:
            said = await refused(tls.url, TOKEN, True)
            assert "CERTIFICATE_VERIFY_FAILED" in said or "certificate verify failed" in said, said

        await check("serve --http --tls-cert: a client that does not trust the certificate cannot connect", untrusted)
    finally:
        plain.stop()
        tls.stop()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)


async def main() -> int:
    binary = checks.binary()
    if binary is None:
        return 2
    await run(binary)
    return checks.tally()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
