// Generated from the service's OpenAPI document by `npm run client:generate`: do not edit.

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness and readiness: the event store and the read-model database answer */
        get: operations["getHealthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness: migrations ran and every projection caught up with the event store as it was when this process started */
        get: operations["getReadyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics: requests, projections, webhooks, withdrawals, chains, and the process (restrict it at the proxy) */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/audit/public-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The audit key’s public key (PEM), to check signed heads */
        get: operations["getAuditPublicKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Log in with username, password and a TOTP code; answers a one-hour access token */
        post: operations["postAuthLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/auth/profile": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The logged-in person (Bearer token only; an API key gets 403) */
        get: operations["getAuthProfile"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/organisation": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller’s organization */
        get: operations["getOrganisation"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/organisation/api-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Issue a new API key, owned by the caller; the previous key is refused from this answer on (Bearer token only) */
        patch: operations["patchOrganisationApiKey"];
        trace?: never;
    };
    "/organisation/webhook": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Set the webhook URL (HTTPS; plain HTTP to localhost outside production) */
        patch: operations["patchOrganisationWebhook"];
        trace?: never;
    };
    "/organisation/webhook/signing-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Rotate the webhook signing secret; deliveries from now on are signed with the new one */
        patch: operations["patchOrganisationWebhookSigningSecret"];
        trace?: never;
    };
    "/organisation/min-withdrawal-signers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** How many signers must approve a withdrawal (1 to the number of users; 1 approves automatically) */
        patch: operations["patchOrganisationMinWithdrawalSigners"];
        trace?: never;
    };
    "/webhooks/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization’s webhook deliveries, newest first */
        get: operations["getWebhooksDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/deliveries/{id}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a delivery again: pending, due now, a fresh retry schedule, the same id */
        post: operations["postWebhooksDeliveriesIdRedeliver"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chains": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The supported chains, as the caller’s organization has them */
        get: operations["getChains"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/chains/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One chain by its CAIP-2 id (the colon may be sent as is or as %3A) */
        get: operations["getChainsId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The supported tokens (native assets and stablecoins), as the caller’s organization has them */
        get: operations["getTokens"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/devnet/deposits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An incoming transfer, or a batch of them, mined in a new block right away (signed by the devnet faucet unless fromAddress is given)
         * @description A batch (`{ transfers: [...] }`, up to 1000) is all or none: one invalid transfer is refused (400/422) with `details.index` naming it, and nothing is mined.
         */
        post: operations["postDevnetDeposits"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/devnet/blocks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Mine `count` blocks now */
        post: operations["postDevnetBlocks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/devnet/reorg": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replace the last `depth` blocks with empty ones (their transactions are dropped) */
        post: operations["postDevnetReorg"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/devnet/faults": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Make the next `count` broadcasts on the chain fail: rejected by the node, or mined and reverted */
        post: operations["postDevnetFaults"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/devnet/require-tag": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** An XRP account requires a destination tag from now on (RequireDest) */
        post: operations["postDevnetRequireTag"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/payments/deposit-address": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The user’s deposit account on a chain, created on first request (one per user per chain, one address for every token of the chain) */
        get: operations["getPaymentsDepositAddress"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/accounts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every deposit account of the organization, all users and chains, newest first */
        get: operations["getAccounts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/payments": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization’s deposits (detected, confirmed or reverted: see status), newest first */
        get: operations["getPayments"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/payments/{userId}/deposits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One user’s deposits across all chains, newest first */
        get: operations["getPaymentsUserIdDeposits"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/portfolio": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization’s balance of every token it has received (CONTRACT §9) */
        get: operations["getPortfolio"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/gas-station": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The organization’s gas wallets: one per enabled EVM and Tron chain (Bitcoin and XRP pay fees from the funds themselves)
         * @description A gas wallet pays the native fee of token sweeps (it tops deposit addresses up with exactly the fee first). Fund it by sending the native currency to `address`; a sweep that lacked gas resumes by itself once the balance covers it.
         */
        get: operations["getGasStation"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/withdrawals": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The organization’s withdrawals, newest first */
        get: operations["getWithdrawals"];
        put?: never;
        /**
         * Request a withdrawal: its funds are held at once
         * @description Status `Pending` when the organization needs one signer, else `PendingApproval`. Refusals: 400 BAD_REQUEST, INVALID_USER_ID, INVALID_AMOUNT, INVALID_RECIPIENT_ADDRESS, MISSING_DESTINATION_TAG; 409 DUPLICATE_REFERENCE (details.withdrawalId); 422 INVALID_CHAIN, CHAIN_NOT_ENABLED, INVALID_TOKEN, INVALID_TOKEN_CHAIN, TOKEN_NOT_ENABLED, WITHDRAWAL_BELOW_MINIMUM, WITHDRAWAL_ABOVE_MAXIMUM, INSUFFICIENT_GAS, INSUFFICIENT_BALANCE, INSUFFICIENT_CONFIRMED_BALANCE.
         */
        post: operations["postWithdrawals"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/withdrawals/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One withdrawal (unwrapped), with externalUserId and Token */
        get: operations["getWithdrawalsId"];
        put?: never;
        post?: never;
        /**
         * Cancel a Pending or PendingApproval withdrawal; its funds are released
         * @description 409 WITHDRAWAL_NOT_PENDING once it is Processing or over, or once its transaction is signed; 404 WITHDRAWAL_NOT_FOUND.
         */
        delete: operations["deleteWithdrawalsId"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/withdrawals/{id}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve a withdrawal (a person, with a fresh TOTP code)
         * @description CONTRACT §4. A Bearer access token only (an API key is 403 FORBIDDEN). 401 INVALID_TOTP for a wrong or reused code; 409 DUPLICATE_APPROVAL, WITHDRAWAL_ALREADY_PROCESSED (not PendingApproval); 404 WITHDRAWAL_NOT_FOUND. When approvers reach minWithdrawalSigners the status becomes Pending.
         */
        post: operations["postWithdrawalsIdApprove"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/withdrawals/approve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve several withdrawals with one fresh TOTP code (a person)
         * @description CONTRACT §4. A Bearer access token only (an API key is 403 FORBIDDEN). One code for the whole request, spent once (401 INVALID_TOTP when wrong or reused). Each id is decided as the single approval, in the order given; a refused id answers its own error and does not stop the others.
         */
        post: operations["postWithdrawalsApprove"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/withdrawals/{id}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every event of one withdrawal, with the withdrawal’s state after each (CONTRACT §9)
         * @description 404 WITHDRAWAL_NOT_FOUND for an unknown id or another organization’s withdrawal.
         */
        get: operations["getWithdrawalsIdHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/audit/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Export the organization’s events with a hash chain (NDJSON or CSV)
         * @description CONTRACT §9. The organization’s events in global order, streamed. Each line is `{ position, stream, revision, type, data, metadata, prevHash, hash }`; `hash` = lowercase hex SHA-256 of `prevHash + "\n" + JCS(line without hash)` (RFC 8785), the first prevHash being 64 zeros unless `prevHash` is given. Secrets (API-key digests, password hashes, sealed TOTP seeds and signing secrets) never appear. The export stops at the position the audit projection has reached when it starts (a few ms behind the head); continue with fromPosition and prevHash.
         */
        get: operations["getAuditEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/audit/head": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Where the organization’s export ends now, signed by the audit key
         * @description CONTRACT §9. `{ position, hash, lines, at, signature }`: the last line’s position and hash of a full export from the start (with the same categories), its number of lines, and when; `signature` is base64 Ed25519 over JCS of the other four fields, by the key at GET /audit/public-key. `ledgergate verify <file> --head <head.json>` fails on a file cut short or extended.
         */
        get: operations["getAuditHead"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        LoginResponse: {
            accessToken: string;
        };
        Error: {
            /** @example BAD_REQUEST */
            error: string;
            message: string;
            statusCode: number;
            details?: {
                [key: string]: unknown;
            };
        };
        LoginRequest: {
            username: string;
            password: string;
            /** @example 123456 */
            totpCode: string;
        };
        UserProfile: {
            id: string;
            username: string;
            org: {
                id: string;
                name: string;
            };
        };
        Organization: {
            id: string;
            name: string;
            webhookUrl: string | null;
            webhookSigningSecret: string;
            minWithdrawalSigners: number;
            /** @example 2026-11-22T10:00:00.000Z */
            createdAt: string;
            /** @example 2026-11-22T10:00:00.000Z */
            updatedAt: string;
        };
        ApiKey: {
            apiKey: string;
        };
        Empty: Record<string, never>;
        WebhookSigningSecret: {
            webhookSigningSecret: string;
        };
        WebhookDeliveryPage: {
            deliveries: components["schemas"]["WebhookDelivery"][];
            nextCursor: string | null;
        };
        WebhookDelivery: {
            /** @description the x-webhook-id header, stable across retries and redeliveries */
            id: string;
            /** @example deposit.detected */
            type: string;
            /** @enum {string} */
            status: "pending" | "delivered" | "failed";
            /** @description attempts made in the current schedule (a redelivery starts again at 0) */
            attempts: number;
            /**
             * @description while pending: when the next attempt is due; null while it waits for the organization to set a webhook URL
             * @example 2026-11-22T10:00:00.000Z
             */
            nextAttemptAt: string | null;
            lastStatusCode: number | null;
            lastError: string | null;
            /** @example 2026-11-22T10:00:00.000Z */
            createdAt: string;
            /** @example 2026-11-22T10:00:00.000Z */
            updatedAt: string;
            /** @example 2026-11-22T10:00:00.000Z */
            deliveredAt: string | null;
            /** @description the event object, as sent in the body */
            payload: {
                [key: string]: unknown;
            };
        };
        WebhookRedelivery: {
            delivery: components["schemas"]["WebhookDelivery"];
        };
        Chain: {
            /**
             * @description CAIP-2
             * @example eip155:1
             */
            id: string;
            /** @example Ethereum */
            name: string;
            /** @example eip155 */
            namespace: string;
            /** @example 1 */
            reference: string;
            /** @description running on this service and not switched off by the organization */
            enabled: boolean;
            isTestnet: boolean;
            properties: {
                /** @example ETH */
                nativeCurrency: string;
                /** @example 18 */
                decimals: number;
                /**
                 * @description blocks needed for deposit.confirmed
                 * @example 12
                 */
                confirmations: number;
            };
        };
        Token: {
            /**
             * @description CAIP-19
             * @example eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7
             */
            id: string;
            /**
             * @description CAIP-2
             * @example eip155:1
             */
            chainId: string;
            /** @example Tether USD */
            name: string;
            /** @example USDT */
            symbol: string;
            /** @example 6 */
            decimals: number;
            /**
             * @description the ERC-20 / TRC-20 contract; empty for a native asset
             * @example 0xdAC17F958D2ee523a2206206994597C13D831ec7
             */
            address: string;
            /** @description its chain enabled and the token not switched off by the organization */
            enabled: boolean;
            /**
             * @description smallest deposit credited, base units
             * @example 1000000
             */
            minimumAmount: string;
            properties: {
                /**
                 * @description base units
                 * @example 1000000
                 */
                minimumWithdrawal: string;
                /**
                 * @description base units
                 * @example 1000000000000
                 */
                maximumWithdrawal: string;
            };
        };
        DevnetDeposit: {
            txnHash: string;
            blockNumber: number;
        };
        DevnetDepositBatch: {
            transfers: components["schemas"]["DevnetDeposit"][];
        };
        DevnetDepositRequest: {
            /**
             * @description CAIP-2 id of a supported chain
             * @example eip155:11155111
             */
            chainId: string;
            /** @example eip155:11155111/slip44:60 */
            tokenId: string;
            toAddress: string;
            /**
             * @description base units, a decimal integer string (CONTRACT §6)
             * @example 1000000000000000000
             */
            amount: string;
            /**
             * @description XRP only: a decimal integer 0–4294967295
             * @example 12345
             */
            destinationTag?: string | number;
            /** @description the sender: recorded as an external transfer from that address (the devnet holds no key for it); absent: the devnet faucet signs a real transaction */
            fromAddress?: string;
        };
        /** @description up to 1000 transfers, on any chains: all mined in the next block of their chain, or none */
        DevnetDepositBatchRequest: {
            transfers: components["schemas"]["DevnetDepositRequest"][];
        };
        DevnetBlockNumber: {
            blockNumber: number;
        };
        DevnetMineRequest: {
            /**
             * @description CAIP-2 id of a supported chain
             * @example eip155:11155111
             */
            chainId: string;
            /** @example 6 */
            count: number;
        };
        DevnetReorgRequest: {
            /**
             * @description CAIP-2 id of a supported chain
             * @example eip155:11155111
             */
            chainId: string;
            /**
             * @description 1..min(100, head)
             * @example 2
             */
            depth: number;
        };
        DevnetFaultRequest: {
            /**
             * @description CAIP-2 id of a supported chain
             * @example eip155:11155111
             */
            chainId: string;
            /** @enum {string} */
            fault: "broadcast_error" | "revert";
            /**
             * @description 0 clears the fault
             * @example 1
             */
            count: number;
        };
        DevnetRequireTagRequest: {
            /**
             * @description CAIP-2 id of a supported chain
             * @example eip155:11155111
             */
            chainId: string;
            address: string;
        };
        Account: {
            orgId: string;
            /** @example eip155:1 */
            chainId: string;
            externalUserId: string;
            orgDepositAccountId: string;
            /** @description EVM, Bitcoin, Tron: address; XRP: the organization address and this user’s destination tag */
            properties: {
                address: string;
                /** @description XRP only: the tag a depositor must send */
                destinationTag?: string;
            };
            /** @example 2026-11-22T10:00:00.000Z */
            createdAt: string;
            /** @example 2026-11-22T10:00:00.000Z */
            updatedAt: string;
        };
        AccountPage: {
            accounts: components["schemas"]["Account"][];
            nextCursor: string | null;
        };
        PaymentPage: {
            payments: components["schemas"]["Deposit"][];
            nextCursor: string | null;
        };
        Deposit: {
            /** @example eip155:1 */
            chainId: string;
            txnHash: string;
            /** @description the output, log or event index within the transaction: with txnHash it names the deposit */
            outputIndex: number;
            /** @description the deposit address it was sent to */
            toAddress: string;
            /**
             * @description detected (pending), confirmed (credited), reverted (its block left the chain before confirmation: never credited, listed so it can be matched)
             * @enum {string}
             */
            status: "detected" | "confirmed" | "reverted";
            /** @description blocks on top of its own, as last recorded (its final count once confirmed) */
            confirmations: number;
            /** @example eip155:1/slip44:60 */
            tokenId: string;
            /**
             * @description base units
             * @example 1500000000000000000
             */
            amount: string;
            /** @description chain of the deposit account */
            accountChainId: string;
            externalUserId: string;
            senderAddress: string;
            Token: components["schemas"]["TokenSummary"];
            /**
             * @description when the deposit was detected
             * @example 2026-11-22T10:00:00.000Z
             */
            createdAt: string;
            /** @example 2026-11-22T10:00:00.000Z */
            updatedAt: string;
        };
        TokenSummary: {
            /** @example eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7 */
            id: string;
            /** @example Tether USD */
            name: string;
            /** @example USDT */
            symbol: string;
            /** @example 6 */
            decimals: number;
            /** @description the contract; empty for a native asset */
            address: string;
        };
        DepositPage: {
            deposits: components["schemas"]["Deposit"][];
            nextCursor: string | null;
        };
        Portfolio: {
            balances: components["schemas"]["Balance"][];
        };
        Balance: {
            /** @example eip155:1 */
            chainId: string;
            /** @example eip155:1/slip44:60 */
            tokenId: string;
            /**
             * @description confirmed deposits − held and sent withdrawals − fees, base units
             * @example 1500000000000000000
             */
            available: string;
            /**
             * @description detected deposits not yet confirmed, base units
             * @example 0
             */
            pending: string;
            Token: components["schemas"]["TokenSummary"];
        };
        GasStation: {
            gasWallets: components["schemas"]["GasWallet"][];
        };
        GasWallet: {
            /** @example eip155:1 */
            chainId: string;
            /**
             * @description the address to fund with the native currency
             * @example 0x4A0a3a3C2A5B9d9bA2b7D8dC1f5C4d5E6f708192
             */
            address: string;
            /**
             * @description base units of the native currency, read from the chain
             * @example 172000000000000
             */
            balance: string;
            Chain: {
                /** @example Ethereum */
                name: string;
                properties: {
                    /** @example ETH */
                    nativeCurrency: string;
                    /** @example 18 */
                    decimals: number;
                };
            };
        };
        WithdrawalCreated: {
            withdrawal: components["schemas"]["Withdrawal"];
        };
        Withdrawal: {
            /** @example 0f4c6a0e-7d0b-4a8e-9f43-2b6f1c0d9a11 */
            id: string;
            orgId: string;
            /** @example eip155:1 */
            chainId: string;
            /** @example eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7 */
            tokenId: string;
            /**
             * @description base units
             * @example 25000000
             */
            amount: string;
            /** @example 0x00000000000000000000000000000000000000b2 */
            recipient: string;
            /** @description on XRP, the destination tag */
            memo: string | null;
            /**
             * @description the caller’s unique idempotency key
             * @example payout-2026-11-22-0001
             */
            reference: string;
            internalNote: string;
            /**
             * @example PendingApproval
             * @enum {string}
             */
            status: "Pending" | "PendingApproval" | "Processing" | "Completed" | "Failed" | "Cancelled";
            txnHash: string | null;
            /** @description why it failed, or `Cancelled by <username>` */
            txnError: string | null;
            /** @description user id of the creator */
            initiator: string;
            /** @description user ids that approved, the initiator first */
            approvers: string[];
            /** @description the network fee paid, base units of the chain’s native coin; null until known */
            fee: string | null;
            /** @example 2026-11-22T10:00:00.000Z */
            createdAt: string;
            /** @example 2026-11-22T10:00:00.000Z */
            updatedAt: string;
        };
        CreateWithdrawal: {
            /** @example eip155:1 */
            chainId: string;
            /**
             * @description CAIP-19; must belong to the chain
             * @example eip155:1/slip44:60
             */
            tokenId: string;
            /**
             * @description base units, greater than 0
             * @example 5000000000000000
             */
            amount: string;
            /** @description an address of the chain (an X-address carries its own destination tag on XRP) */
            recipient: string;
            /** @description unique per organization; reusing it is DUPLICATE_REFERENCE */
            reference: string;
            /** @description on XRP the destination tag (decimal 0–4294967295), required by accounts that demand one */
            memo?: string;
            internalNote?: string;
            /**
             * @description the integrator’s user on whose behalf it withdraws (1–255 printable ASCII)
             * @example user-1
             */
            externalUserId?: string;
        };
        WithdrawalPage: {
            withdrawals: components["schemas"]["Withdrawal"][];
            nextCursor: string | null;
        };
        WithdrawalDetail: components["schemas"]["Withdrawal"] & {
            /** @description the integrator’s user it was made for, if given */
            externalUserId: string | null;
            Token: components["schemas"]["TokenSummary"];
        };
        WithdrawalCancelled: {
            withdrawal: {
                id: string;
                /**
                 * @example PendingApproval
                 * @enum {string}
                 */
                status: "Pending" | "PendingApproval" | "Processing" | "Completed" | "Failed" | "Cancelled";
                /** @example Cancelled by alice */
                txnError: string | null;
                /** @example 2026-11-22T10:00:00.000Z */
                updatedAt: string;
            };
        };
        WithdrawalApprovedAnswer: {
            withdrawal: components["schemas"]["Withdrawal"];
        };
        ApproveWithdrawal: {
            /** @example 123456 */
            totpCode: string;
        };
        WithdrawalsApprovedAnswer: {
            results: ({
                id: string;
                withdrawal: components["schemas"]["Withdrawal"];
            } | {
                id: string;
                error: components["schemas"]["Error"];
            })[];
        };
        ApproveWithdrawals: {
            /**
             * @example [
             *       "0f4c6a0e-7d0b-4a8e-9f43-2b6f1c0d9a11"
             *     ]
             */
            ids: string[];
            /** @example 123456 */
            totpCode: string;
        };
        WithdrawalHistory: {
            events: components["schemas"]["WithdrawalHistoryEntry"][];
        };
        WithdrawalHistoryEntry: {
            /** @description the event’s revision in the withdrawal’s stream, from 0 */
            revision: number;
            /** @example WithdrawalApproved */
            type: string;
            data: {
                [key: string]: unknown;
            };
            metadata: {
                /** @description user id, `system`, or a component (`processor:eip155:1`) */
                actor: string;
                /**
                 * @description how the actor proved who they are; null on events recorded before it was
                 * @enum {string|null}
                 */
                credential: "person" | "api-key" | "system" | null;
                /** @description the person’s login name (the key owner’s for an API key); null for the service */
                username: string | null;
                requestId: string | null;
                /** @example 2026-11-22T10:00:00.000Z */
                at: string;
            };
            state: components["schemas"]["WithdrawalDetail"] & unknown;
        };
        AuditHead: {
            position: string;
            hash: string;
            lines: number;
            at: string;
            signature: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getHealthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description All stores answer */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ok";
                    };
                };
            };
            /** @description A store does not answer (SERVICE_UNAVAILABLE, details name which) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getReadyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready for traffic */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "ready";
                    };
                };
            };
            /** @description Not ready yet (SERVICE_UNAVAILABLE, details.waitingFor names what it waits for) */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The Prometheus text exposition format */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
        };
    };
    getAuditPublicKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description An Ed25519 public key, SPKI PEM */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-pem-file": string;
                };
            };
        };
    };
    postAuthLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LoginRequest"];
            };
        };
        responses: {
            /** @description Logged in */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LoginResponse"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: bodies over 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAuthProfile: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The profile */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserProfile"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN: this action needs a person (a JWT), not an API key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getOrganisation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The organization */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Organization"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    patchOrganisationApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The new key, shown once */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKey"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN: this action needs a person (a JWT), not an API key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    patchOrganisationWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @example https://hooks.example.com/ledgergate */
                    webhookUrl: string;
                };
            };
        };
        responses: {
            /** @description Set */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Empty"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: bodies over 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    patchOrganisationWebhookSigningSecret: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The new secret */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookSigningSecret"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    patchOrganisationMinWithdrawalSigners: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description an integer from 1 to the number of users (else INVALID_MIN_SIGNERS)
                     * @example 2
                     */
                    minWithdrawalSigners: number;
                };
            };
        };
        responses: {
            /** @description Set */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Empty"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: bodies over 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWebhooksDeliveries: {
        parameters: {
            query?: {
                status?: "pending" | "delivered" | "failed";
                limit?: number;
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries; nextCursor is null on the last page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryPage"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postWebhooksDeliveriesIdRedeliver: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery, pending again */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookRedelivery"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getChains: {
        parameters: {
            query?: {
                /** @description only what is enabled for the organization (default true) */
                enabledOnly?: "true" | "false";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The chains, in SPEC’s order */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        chains: components["schemas"]["Chain"][];
                    };
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getChainsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The chain */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        chain: components["schemas"]["Chain"];
                    };
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getTokens: {
        parameters: {
            query?: {
                /** @description only this chain’s tokens (CAIP-2) */
                chainId?: string;
                /** @description only what is enabled for the organization (default true) */
                enabledOnly?: "true" | "false";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tokens */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        tokens: components["schemas"]["Token"][];
                    };
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postDevnetDeposits: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DevnetDepositRequest"] | components["schemas"]["DevnetDepositBatchRequest"];
            };
        };
        responses: {
            /** @description The transaction and the block that includes it; for a batch, one per transfer in the order given */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DevnetDeposit"] | components["schemas"]["DevnetDepositBatch"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postDevnetBlocks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DevnetMineRequest"];
            };
        };
        responses: {
            /** @description The new head */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DevnetBlockNumber"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postDevnetReorg: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DevnetReorgRequest"];
            };
        };
        responses: {
            /** @description The head after the reorg (the same height) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DevnetBlockNumber"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postDevnetFaults: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DevnetFaultRequest"];
            };
        };
        responses: {
            /** @description Set */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postDevnetRequireTag: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DevnetRequireTagRequest"];
            };
        };
        responses: {
            /** @description Set */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPaymentsDepositAddress: {
        parameters: {
            query: {
                chainId: string;
                tokenId: string;
                /** @description the integrator’s user id: 1–255 printable ASCII characters */
                userId: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The account */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        address: components["schemas"]["Account"];
                    };
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAccounts: {
        parameters: {
            query?: {
                limit?: number;
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of accounts; nextCursor is null on the last page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AccountPage"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPayments: {
        parameters: {
            query?: {
                /** @description only this user’s deposits; the integrator’s user id: 1–255 printable ASCII characters */
                userId?: string;
                limit?: number;
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deposits; nextCursor is null on the last page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PaymentPage"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPaymentsUserIdDeposits: {
        parameters: {
            query?: {
                limit?: number;
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path: {
                /** @description the integrator’s user id: 1–255 printable ASCII characters */
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of the user’s deposits; nextCursor is null on the last page */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DepositPage"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getPortfolio: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The balances, in the token catalog’s order */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Portfolio"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getGasStation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The gas wallets, in SPEC’s chain order */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GasStation"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWithdrawals: {
        parameters: {
            query?: {
                /** @description only withdrawals in this status */
                status?: "Pending" | "PendingApproval" | "Processing" | "Completed" | "Failed" | "Cancelled";
                limit?: number;
                /** @description nextCursor of the previous page */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page; nextCursor is null on the last */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawalPage"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postWithdrawals: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateWithdrawal"];
            };
        };
        responses: {
            /** @description Created; txnHash and txnError are null */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawalCreated"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: bodies over 64 KiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description semantically invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description SERVICE_UNAVAILABLE */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWithdrawalsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The withdrawal as it is now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawalDetail"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    deleteWithdrawalsId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Cancelled */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawalCancelled"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postWithdrawalsIdApprove: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ApproveWithdrawal"];
            };
        };
        responses: {
            /** @description Approved */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawalApprovedAnswer"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN: this action needs a person (a JWT), not an API key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    postWithdrawalsApprove: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ApproveWithdrawals"];
            };
        };
        responses: {
            /** @description One result per id, in the order given */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawalsApprovedAnswer"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description FORBIDDEN: this action needs a person (a JWT), not an API key */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getWithdrawalsIdHistory: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The events in order */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WithdrawalHistory"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description not found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAuditEvents: {
        parameters: {
            query?: {
                /** @description default: all. One or more of organization, account, deposit, ledger, withdrawal, comma-separated */
                category?: string;
                /** @description events decided at or after this time (metadata.at), ISO 8601 */
                from?: string;
                /** @description events decided at or before this time (metadata.at), ISO 8601 */
                to?: string;
                /** @description events at or after this global position */
                fromPosition?: string;
                /** @description events at or before this global position */
                toPosition?: string;
                /** @description continue an earlier export: its last line’s hash becomes this export’s first prevHash (default 64 zeros) */
                prevHash?: string;
                /** @description NDJSON (default) or CSV (RFC 4180, same columns; data and metadata as JSON text) */
                format?: "ndjson" | "csv";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The events, one line each (CSV: a header line first) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-ndjson": string;
                    "text/csv": string;
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
    getAuditHead: {
        parameters: {
            query?: {
                /** @description default: all. One or more of organization, account, deposit, ledger, withdrawal, comma-separated */
                category?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The signed head */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditHead"];
                };
            };
            /** @description BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description RATE_LIMITED, with Retry-After in seconds */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
            /** @description INTERNAL_ERROR */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"];
                };
            };
        };
    };
}
