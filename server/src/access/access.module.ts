import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { SecretLockout } from './secret-lockout';
import { VisitorHasher } from './visitor-hasher';

/** What SecretGuard needs: every module behind the secret imports this one, so the lockout is one per app. */
@Module({
  imports: [RepositoriesModule, AlertsModule],
  providers: [VisitorHasher, SecretLockout],
  exports: [VisitorHasher, SecretLockout],
})
export class AccessModule {}
