/**
 * A role's name (docs/api.md §2.1, R2.3.6): `user`, the role of every account that was given none, or another of 1 to
 * 32 of `a-z 0-9 _ -` starting with a letter: what `tessera users set-role`, PUT /admin/users/<id> and ADMIN_ROLE take.
 */
export const ROLE_NAME = /^[a-z][a-z0-9_-]{0,31}$/
