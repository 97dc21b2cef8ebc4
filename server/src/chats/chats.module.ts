import { Module } from '@nestjs/common';
import { AlertsModule } from '../alerts/alerts.module';
import { RepositoriesModule } from '../repositories/repositories.module';
import { LeadsChatService } from './leads-chat.service';

@Module({ imports: [RepositoriesModule, AlertsModule], providers: [LeadsChatService], exports: [LeadsChatService] })
export class ChatsModule {}
