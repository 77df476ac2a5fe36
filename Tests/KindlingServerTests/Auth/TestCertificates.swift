/// Self-signed test certificates (made once with `openssl req -x509`, 100-year validity) and
/// their private keys: only ever used to sign tokens inside these tests.
enum TestCertificates {
    static let ecCertificate = """
        -----BEGIN CERTIFICATE-----
        MIIBhzCCAS2gAwIBAgIUDspjvs5bjOiSEPbJRvLY2huxckEwCgYIKoZIzj0EAwIw
        GDEWMBQGA1UEAwwNa2luZGxpbmctdGVzdDAgFw0yNjExMjMyMzIzNTBaGA8yMTI2
        MTAzMDIzMjM1MFowGDEWMBQGA1UEAwwNa2luZGxpbmctdGVzdDBZMBMGByqGSM49
        AgEGCCqGSM49AwEHA0IABPcJ2c/N6o8kfeKdutGK58KNHmofgzhoR4OIUIij42Zs
        ZXr5oyAeq3bh+iPJgrEp4UwGBoluuWvhAW9t0fFgLXSjUzBRMB0GA1UdDgQWBBQK
        7QszfuhhTnJwZDeFMsrRTvJxbzAfBgNVHSMEGDAWgBQK7QszfuhhTnJwZDeFMsrR
        TvJxbzAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIFzc9HVBdD2p
        ti7fLrW+gNsI6ZeVHjTAeavw0kNI2nj5AiEA8LuJkt2bFSkNVN4/rLkSr+uJggB8
        kUbSz1FNoyA8Cbw=
        -----END CERTIFICATE-----
        """
    static let ecPrivateKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwJubfnjeWWtq9py4
        2JgD+bzI/9PqqzhGGuY2g9T4xMyhRANCAAT3CdnPzeqPJH3inbrRiufCjR5qH4M4
        aEeDiFCIo+NmbGV6+aMgHqt24fojyYKxKeFMBgaJbrlr4QFvbdHxYC10
        -----END PRIVATE KEY-----
        """
    static let rsaCertificate = """
        -----BEGIN CERTIFICATE-----
        MIIDEzCCAfugAwIBAgIUeIzoA0hEpO+ZhtoR24mwGj8r4NUwDQYJKoZIhvcNAQEL
        BQAwGDEWMBQGA1UEAwwNa2luZGxpbmctdGVzdDAgFw0yNjExMjMyMzIzNTBaGA8y
        MTI2MTAzMDIzMjM1MFowGDEWMBQGA1UEAwwNa2luZGxpbmctdGVzdDCCASIwDQYJ
        KoZIhvcNAQEBBQADggEPADCCAQoCggEBAOHWKgMUo+yO0Nw762KfJHZC7pQYi8nZ
        w5z6NlxGH5dTrsIfE5kZ/yumHm2KER8F1RKngzRkxSgfc3Nv5ra0WhHIAV0AJO2K
        jZtyvQoY/28NuQHwUOhRVVo7T/tgQt5GLKC1ossAqjiXljMm6wOFoycrjljBNpRn
        NrjwME2mKSy+Pwb+bQ2KOetGrgK0MLHoFSnxeP2C3OOhi5E2Gz4BExuiMW8OUQwA
        SxW/T9PbnTT1diw2BxTA4YD6eTiW4s9syE9e72v4mXnNgyGbhEGBc4bL+7cxv7km
        PVTFWmNwGE4T9vnurXkGHdLjfarhfefYbK+wWrVJrMgpgDI/OFEBTKUCAwEAAaNT
        MFEwHQYDVR0OBBYEFHlAVxVWpduD6IlcfkC77acLQHWLMB8GA1UdIwQYMBaAFHlA
        VxVWpduD6IlcfkC77acLQHWLMA8GA1UdEwEB/wQFMAMBAf8wDQYJKoZIhvcNAQEL
        BQADggEBAB41p0eZYqtPZeoOvdFBNW9FfvlJKUHyYPWuZ/a9qJY8MGmNsdcAw3tn
        MSeQ5VW6KoTHUgzSdYiL9Fw18DwtKkWHPFMlpcHgN7n3zF+kklKVyyJ17zpl3nPy
        YcYOZEOE/JqnYf3MCLUcZIHJgEnNs5oILoct+Hc3pZef3BJTXIAT/54GCTlLJDZ/
        Ct/m230Y0Q0dsH+Sg3dQobq2jjrbSQg/kb4EChwph7jKD97X8bNMBC94NMMlU/WV
        XeBQ9VOjbdRMVs6WY/rkUZ5p6WqOlsV0t0kR3uDnqOPm2znakBIJUiI8eoNnIzH1
        En3terv8boJ48/tF81iK2QGpIS6Ja58=
        -----END CERTIFICATE-----
        """
    static let rsaPrivateKey = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDh1ioDFKPsjtDc
        O+tinyR2Qu6UGIvJ2cOc+jZcRh+XU67CHxOZGf8rph5tihEfBdUSp4M0ZMUoH3Nz
        b+a2tFoRyAFdACTtio2bcr0KGP9vDbkB8FDoUVVaO0/7YELeRiygtaLLAKo4l5Yz
        JusDhaMnK45YwTaUZza48DBNpiksvj8G/m0NijnrRq4CtDCx6BUp8Xj9gtzjoYuR
        Nhs+ARMbojFvDlEMAEsVv0/T25009XYsNgcUwOGA+nk4luLPbMhPXu9r+Jl5zYMh
        m4RBgXOGy/u3Mb+5Jj1UxVpjcBhOE/b57q15Bh3S432q4X3n2GyvsFq1SazIKYAy
        PzhRAUylAgMBAAECggEAbYOB3vmQ3mOJI+tIo4wBzfl6IUXf79PSeJqbZta4dhUl
        /0u7oLhLFbsaMUtNLyqQX1ntFaiyNNk/jqCalEnUDaBcDOHHhot0TQfwZOenYo6Y
        gziqu2XJipaNnBxbgNctyAccuO2LHiNgOlDqkUwqSJHmFuMnGQMONdN/0P+9Isz7
        pbZxHsCCZJcmpo3N2gJOrXZ8+U1DNCEne4kUwmDVx5qZUEgL8z/IEVAg56NS3g7E
        yp157h7DHJSwss6YnPUUH5WUIigJ0SXFutsPQNKhf83i3XFXa66PK32UyBcAz/Cx
        ipBsNLIbDZbUFLopEnVAHnciDpy6NqZBKEfkH3x9pwKBgQDyMWto5jT6zNd2CKcQ
        AuMKI7GZQtRuQeR16xO8XQcpXcxZB3/lw86ixG/D1Y6jxi8KROL2S0kpuHcnLdRs
        sqUKetkZHmj+GqzY/eiFj7d902+IFA6yUiMWxnxa5jHKsuKXfr5fI3Vny8wuvuHZ
        lBDe7OeuduPiWWUflueamQhc1wKBgQDutgmI1pYJrv1aB1jKm1LFTtu1Fh5iT+kT
        0qrO4ifSnIMAcbHqrXBHz5Zb3G8+0U5MehrrivDznnM1LRGPgpz7zETAwNacNC0f
        f9tmMHiFyA1Otp3snQC4F/zZeJjjqPJ5Qo1wTFsJcTtoEu6FpuMR47Qjyi+rPV1O
        1B2DqjeW4wKBgBHKS4eDEXUywsjqzcrBS4gdIxiM7inDMVLwF50IgFQrja0kfeKU
        xYLzRvptn3KsRhxM/xb0ZMVpxWbdWPM7FCB28aeEslWoA/ZUgFX/Po1BkLnAL2wt
        2GH95niO3C11gmt6ZeV7J06ei7sLTm+7DpoxcLtCBG9F/cWaQhz7DMA1AoGBAI3r
        FgIPqcX6Dk/e/FAARhZeCss/ajMC1UxevAQhepGBUXULIz6lfJKE/RyCEnVjVMys
        76JHyXbdJhtgPwd2HMSqrdl3DGBzuLv4dMTtXkoTJK4+beeFdC7+u+nDBAqdoAKt
        qY8xJhKYCjyWvM4i6O7y1F9OzkZdRkMeYqmroj8HAoGAAXOyfddMPvGZSRx4w9bv
        pPZZHFpa/PAbkHdhLKummzpsKnCbewRnmozF59FizCq47zqeNfIFXSXHwlxHd9WJ
        Yez1/v5N77ChOcYgpJmb0M4r8mrVGKDS+JN9vadM7fcis3gCO350OikhVV6R7MK6
        IcZVvqWJCqlxMKa93MtLej4=
        -----END PRIVATE KEY-----
        """
}
