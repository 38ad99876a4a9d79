# peers_regress.R - robustbase's ltsReg on the same kind of data as bench_regress (20 % vertical
# outliers, y = 1 + sum x + N(0, 1)): Rscript bench/peers_regress.R N P
a <- commandArgs(TRUE); n <- as.integer(a[1]); p <- as.integer(a[2])
suppressMessages(library(robustbase)); set.seed(42)
X <- matrix(rnorm(n * p), n, p); y <- 1 + rowSums(X) + rnorm(n); y[seq(1, n, 5)] <- y[seq(1, n, 5)] + 100
for (r in 1:3) { t <- system.time(f <- ltsReg(X, y))[["elapsed"]]
  cat(sprintf("robustbase ltsReg n %d p %d: %.3f s intercept %.4f crit(std) %.6g\n", n, p, t, f$coefficients[1], f$crit)) }
