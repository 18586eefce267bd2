/* deploy/policy.yaml, compiled in as the default policy. */
    .section .rodata
    .global policy_embedded
    .global policy_embedded_end
policy_embedded:
    .incbin "deploy/policy.yaml"
policy_embedded_end:
    .byte 0
    .section .note.GNU-stack,"",@progbits
