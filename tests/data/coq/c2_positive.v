(* <S, S*> = N p_on > 0 when K >= 1 (softmax entries are positive) *)
Theorem c2_positive :
forall E K n : R,
  K >= 1 ->
  E > 0 ->
  (n = 0) \/ (n >= 1) ->
  E*(n + E*K) > 0.
Proof.
  intros; repeat match goal with H : _ \/ _ |- _ => destruct H end; try subst; nra.
Qed.
