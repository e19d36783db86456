"""Verifies a Tessera access token with PyJWT, an implementation independent of the service's (another language,
another JOSE library), the way a Python service would: the key comes from the JWKS URL by the token's kid, and the
algorithm is pinned by the caller, never taken from the token.

Usage: pyjwt_verify.py <jwks-url> <algorithm> <token> [issuer]
Prints the verified claims as JSON and exits 0; prints the refusal and exits 1. Exits 3 when PyJWT or the
cryptography package it needs for EdDSA and ES256 is missing (Debian: apt-get install python3-jwt python3-cryptography).
"""

import json
import sys

try:
    import cryptography  # noqa: F401  (PyJWT needs it for every asymmetric algorithm)
    import jwt
except ImportError as missing:
    print(f"missing: {missing}", file=sys.stderr)
    sys.exit(3)


def main() -> int:
    jwks_url, algorithm, token = sys.argv[1:4]
    issuer = sys.argv[4] if len(sys.argv) > 4 else None
    try:
        key = jwt.PyJWKClient(jwks_url, cache_keys=False).get_signing_key_from_jwt(token)
        claims = jwt.decode(
            token,
            key.key,
            algorithms=[algorithm],
            issuer=issuer,
            options={"require": ["sub", "exp", "iat", "jti"] + (["iss"] if issuer else [])},
        )
    except jwt.PyJWTError as refusal:
        print(f"{type(refusal).__name__}: {refusal}", file=sys.stderr)
        return 1
    print(json.dumps({"claims": claims, "kid": key.key_id, "version": jwt.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
