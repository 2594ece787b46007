/**
 * What recovery re-validation (DESIGN §4) needs of the stored principal that started a job; read
 * by claimJob in the claim statement. Null there when the principal has no row — a configured local
 * principal or a JWT subject — which stores nothing to re-check.
 */
export interface PrincipalGrant {
  disabled: boolean;
  scopes: string[];
}
